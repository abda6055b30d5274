"""AWS builders for the cluster capabilities (network, EKS, node groups, DNS, identity)."""
