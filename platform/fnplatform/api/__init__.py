"""A module's API and the function's own: the pydantic models that are the one source of
each XRD and its CEL rules, the step input, the phase vocabulary of a status, the user's
part of a composite's spec, readable validation messages and layered partial specs
(flavors, presets). Imported by composers (their models), the library, the composition
view, the engine, the server and the generators under tools/; imports only the request
package and the shared vocabulary.
"""
