//go:build tools

// Package tools pins the kube-apiserver: tools/live/build.sh builds its binary.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
