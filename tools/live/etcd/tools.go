//go:build tools

// Package tools pins the etcd server module: tools/live/build.sh builds its binary.
package tools

import _ "go.etcd.io/etcd/server/v3"
