"""Cloud module: gcp (provider-upjet-gcp v2, cluster-scoped ``*.gcp.upbound.io`` kinds).

Importing it registers the GCP builders and answers on the capability objects of
:mod:`fnplatform.library` (:func:`fnplatform.clouds.load` finds every file here, so none is
listed by hand), one file per capability as on every cloud (``network``, ``cluster``
with node pools, ``dns``, ``identity``, ``bucket``, ``key``, ``cdn``, ``database``, ``ingress``,
``failover``), the kinds in ``kinds``, helpers in ``common``, ``settings`` (the environment's
``gcp`` block) and ``iam``. The project is the one the composer places the composite in.
"""
