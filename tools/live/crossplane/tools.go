//go:build tools

// Package tools pins Crossplane core (the same release as tools/crank): tools/live/build.sh
// builds its binary.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
