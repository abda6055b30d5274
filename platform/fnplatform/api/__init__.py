"""A module's API: the pydantic models that are the one source of each XRD and its CEL
rules, the phase vocabulary of its status, the user's part of a composite's spec,
readable validation messages and layered partial specs (flavors, presets). Imported by
composers (their models), the library, the composition view, the engine and the
generators under tools/; imports only the request package and the shared vocabulary.
"""
