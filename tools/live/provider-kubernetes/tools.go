//go:build tools

// Package tools pins provider-kubernetes: tools/live/build.sh builds its binary.
package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
