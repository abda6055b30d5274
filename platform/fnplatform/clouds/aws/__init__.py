"""Cloud module: aws (provider-upjet-aws v2, cluster-scoped ``*.aws.upbound.io`` kinds).

Importing it registers the AWS builders and answers on the capability objects of
:mod:`fnplatform.library`; :func:`fnplatform.clouds.load` finds every file here, so none is
listed by hand. The layout is the same on every cloud: one file per capability,
the ``home`` each capability declares (``network``, ``cluster`` with
node pools, ``dns``, ``identity``, ``bucket``, ``key``, ``cdn``, ``database``, ``ingress``,
``failover``, ``queue``), the kinds in ``kinds``, and the helpers only AWS needs in
``common`` (ARNs, names), ``settings`` (the environment's ``aws`` block), ``iam`` and ``tags``.
Placement (account, region) comes from :meth:`fnplatform.composition.Composition.place`.
"""
