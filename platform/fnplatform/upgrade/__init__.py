"""What an upgrade of the function would do to the composites a cluster holds, before it happens.

Lives here: the upgrade preview (``python -m fnplatform.upgrade preview``, ``make
upgrade-preview``; docs/upgrading.md "Preview an upgrade") and the table of fields a cloud
cannot change in place (``immutable-fields.yaml``, read through :mod:`.immutable`), which
``tests/test_upgrade.py`` holds every release's composites to as well.

The preview reads a cluster (through ``kubectl``) or an export of one (:mod:`.inputs`), serves
the running release and the candidate as functions (:mod:`.functions`), renders every composite
with both through the real ``crossplane composition render`` (:mod:`.render`), compares the two
renders (:mod:`.plan`) and prints them as crossplane-diff does (:mod:`.report`).

Who may import it: tools and tests, and the preview's own entry point. The function's request
path (``function/``, ``fnplatform.engine.runner`` and everything it calls) must not: this package
starts processes and reads clusters. It reads the library only to know which kinds are
stateful (:func:`fnplatform.kinds.is_stateful`). :mod:`.immutable` imports nothing of
``fnplatform``, so a tool can load it by path inside a release's tree.
"""
