"""The rules run over a composer's desired resources, the same for every module: holds
and deletion order (Usages), the guard for stateful resources, conditions that vouch
for a control, provider health, nothing created inside imported infrastructure.
Imported by the engine's runner and by composers that declare controls; imports the
composition view and the observation package, never a composer.
"""
