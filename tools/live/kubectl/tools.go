//go:build tools

// Package tools pins kubectl (same k8s.io/kubernetes release as the kube-apiserver): the upgrade
// preview (python -m fnplatform.upgrade preview) reads a cluster through kubectl, and its live
// test runs it against the live control plane. tools/live/build.sh builds it.
package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
