"""Reading a RunFunction request, for every floor: the required resources a pass
declares and reads, protobuf Struct conversion, and the bounded memo the per-content
caches share. Imports only the shared vocabulary; everything above may import it.
"""
