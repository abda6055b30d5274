"""Reading observed state: which composed resources exist, their fields and conditions,
and what provider-kubernetes observed inside a cluster. Imported by the composition
view, the rules and composers; imports only the request package and the shared
vocabulary.
"""
