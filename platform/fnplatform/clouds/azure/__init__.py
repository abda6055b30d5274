"""Cloud module: azure (provider-upjet-azure v2, cluster-scoped ``*.azure.upbound.io`` kinds).

Importing it registers the Azure builders and answers on the capability objects of
:mod:`fnplatform.library` (:func:`fnplatform.clouds.load` finds every file here, so none is
listed by hand), one file per capability as on every cloud (``network``, ``cluster``
with node pools, ``dns``, ``identity``, ``bucket``, ``key``, ``cdn``, ``database``, ``ingress``,
``failover``, ``resource_group``), the kinds in ``kinds``, helpers in ``common`` (names,
role assignments) and ``settings`` (the environment's ``azure`` block). Resources land in the
resource group the composer places the composite in (composed by ``resource_group`` or an
existing one).
"""
