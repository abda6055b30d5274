// Package auth is a build shim standing in for the Nebius SDK's auth package (see ../go.mod).
package auth

// BearerToken stands in for a Nebius IAM token.
type BearerToken struct {
	Token string
}

// PrivateKeyParser stands in for the service account key parser.
type PrivateKeyParser struct{}

// NewPrivateKeyParser accepts a key and does nothing.
func NewPrivateKeyParser([]byte, string, string) *PrivateKeyParser { return &PrivateKeyParser{} }
