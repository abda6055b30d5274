//go:build tools

// Package tools pins kube-controller-manager (same k8s.io/kubernetes release as the
// kube-apiserver): the live control plane runs its garbage collector and namespace controller,
// which delete what owner references and namespaces say. tools/live/build.sh builds it.
package tools

import _ "k8s.io/kubernetes/cmd/kube-controller-manager"
