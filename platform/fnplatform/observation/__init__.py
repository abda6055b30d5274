"""Reading observed state: which composed resources exist, their fields and Ready
condition, what provider-kubernetes observed inside a cluster, and each kind's
readiness rule. Imported by the composition view, rules and composers; imports only
the shared vocabulary (fieldpath, kinds).
"""
