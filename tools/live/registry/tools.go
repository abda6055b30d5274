//go:build tools

// Package tools pins go-containerregistry's in-memory OCI registry (cmd/registry): the live
// control plane pulls the function's package from it, on 127.0.0.1.
package tools

import _ "github.com/google/go-containerregistry/cmd/registry"
