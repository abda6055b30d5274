// Package gosdk is a build shim standing in for the Nebius SDK (see go.mod): the
// signatures provider-kubernetes calls, each failing.
package gosdk

import (
	"context"
	"errors"

	"github.com/nebius/gosdk/auth"
)

// errUnavailable is what every Nebius call returns in this build.
var errUnavailable = errors.New("nebius authentication is not built into this provider-kubernetes (live test build)")

// SDK stands in for the Nebius SDK client.
type SDK struct{}

// Option stands in for an SDK option.
type Option struct{}

// Credentials stands in for SDK credentials.
type Credentials struct{}

// New always fails: there is no Nebius here.
func New(context.Context, ...Option) (*SDK, error) { return nil, errUnavailable }

// WithCredentials accepts credentials and does nothing.
func WithCredentials(Credentials) Option { return Option{} }

// ServiceAccountReader accepts a parser and does nothing.
func ServiceAccountReader(*auth.PrivateKeyParser) Credentials { return Credentials{} }

// BearerToken always fails.
func (*SDK) BearerToken(context.Context) (auth.BearerToken, error) {
	return auth.BearerToken{}, errUnavailable
}
