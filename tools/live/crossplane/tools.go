//go:build tools

// Package tools pins Crossplane core: tools/live/build.sh builds its binary, which the live
// control plane runs and `crossplane composition render --crossplane-binary` renders with.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
