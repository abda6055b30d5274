//go:build tools
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
