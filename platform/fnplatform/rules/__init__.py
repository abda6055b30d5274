"""The rules run over a composer's desired resources, the same for every module: holds
and deletion order (Usages), the guard for stateful resources, conditions that vouch
for a control, each kind's readiness, provider health, nothing created inside imported
infrastructure. Imported by the engine's runner, by composers and by cloud builders that
declare controls or guard a replacement; imports the composition view and below, never
a composer, a cloud or the library.
"""
