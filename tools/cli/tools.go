//go:build tools

// Package tools pins the Crossplane CLI: tools/install-cli.sh builds its binary.
package tools

import _ "github.com/crossplane/cli/v2/cmd/crossplane"
