// A build shim, not the Nebius SDK: provider-kubernetes imports github.com/nebius/gosdk
// for Nebius mk8s authentication, which the Go module proxy refuses (403). The live
// control plane never talks to Nebius; every call here fails, saying so.
module github.com/nebius/gosdk

go 1.25
