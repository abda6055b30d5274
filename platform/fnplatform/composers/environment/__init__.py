"""The ``environment`` module: a squad's self-service app environment on AWS, GCP or Azure.

One claim (``EnvironmentClaim``) gives a namespace ``<composite>-environment``, a private
PostgreSQL database sized by a preset, a private asset bucket ``<bucketPrefix>-<appName>-<suffix>``
behind the cloud's CDN with one cache path per micro-frontend, and the backend Deployment and
Service wired to the database through the Secret ``db-connection-details``. The composer says
what the environment is; the library and the cloud builders say how each cloud does it.

The app connects as its own database user (issue 22 item 19, see ``user.py``): the
database's administrator connection details go to the admin namespace ``<composite>-dbadmin``
only (the provider writes them there when the app runs on the Crossplane cluster; when the
environment names another cluster (``appCluster.providerConfig``), or in the namespaced form,
the database writes them next to Crossplane and provider-kubernetes copies them at apply time,
``references[].patchesFrom``). A Job there creates the app's role and writes the app's Secret
``db-connection-details`` into the app's namespace. The values never pass through the
function. The Deployment waits for that Job, so pods never crash-loop on a missing Secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.api.validation import parse
from fnplatform.api.xrspec import user_spec
from fnplatform.cloud import Cloud
from fnplatform.composers.environment import ci, manifests, password, user
from fnplatform.composers.environment.manifests import App
from fnplatform.composers.environment.model import (
    API_PATH,
    BUCKET_NAME_MAX,
    EnvironmentSettings,
    EnvironmentSpec,
)
from fnplatform.composers.environment.status import Parts, report_status
from fnplatform.composition import UID_SUFFIX_LENGTH, Composition
from fnplatform.errors import InputError
from fnplatform.holds import Wait
from fnplatform.kinds import kind_of
from fnplatform.library import ObjectReadiness, add_bucket, add_cdn, add_database, add_object
from fnplatform.library.bucket import BucketSpec, bucket_address, bucket_name_from
from fnplatform.library.cdn import CdnPath, CdnSpec, cdn_bucket_reader
from fnplatform.library.database import (
    DatabaseSpec,
    PrivateNetwork,
    SecretKey,
    database_env,
    database_password_source,
    global_private_network,
)
from fnplatform.library.regions import check_region
from fnplatform.naming import dns_label
from fnplatform.placement import cloud_settings, scope_from_environment

NAMESPACE, DATABASE, ASSETS, CDN = "namespace", "database", "assets", "cdn"
CONNECTION_COPY, DEPLOYMENT, SERVICE = "db-connection", "backend-deployment", "backend-service"
ADMIN_NAMESPACE, USER_JOB, INGRESS = "db-admin-namespace", "db-user", "backend-ingress"
USER_ACCOUNT, USER_ROLE, USER_BINDING = "db-user-account", "db-user-role", "db-user-binding"
ROOT_NAMESPACE, ROOT_ACCOUNT, ROOT_JOB = "db-root-namespace", "db-root-account", "db-root"
ROOT_ROLE, ROOT_BINDING = "db-root-role", "db-root-binding"
#: Where provider-side Secrets live on the Crossplane cluster.
CROSSPLANE_NAMESPACE = "crossplane-system"
NONCURRENT_ASSET_DAYS = 30
#: Scope (project / resource group) per cloud: the environment key it comes from.


def compose(comp: Composition) -> None:
    """Compose one environment for ``comp``."""
    if not (comp.composite.get("metadata") or {}).get("name"):
        raise InputError("metadata.name", "required: it names the namespace and every resource")
    spec = parse(EnvironmentSpec, user_spec(comp.spec), "spec")
    settings = parse(EnvironmentSettings, comp.env, "environment")
    network = _place(comp, spec)
    app = App(namespace=dns_label(comp.name, "environment"), backend=spec.backend)
    remote = settings.appCluster.providerConfig if settings.appCluster else None

    add_object(comp, NAMESPACE, manifests.namespace(app), provider_config=remote)
    admin_ns = dns_label(comp.name, "dbadmin")
    add_object(comp, ADMIN_NAMESPACE, user.namespace(admin_ns), provider_config=remote)
    database = _database(comp, spec, remote, settings, admin_ns=admin_ns, network=network)
    _app_user(
        comp,
        app,
        remote,
        settings,
        admin_ns=admin_ns,
        admin_env=database_env(comp, database, user.ADMIN_SECRET),
    )
    cdn = _frontend(comp, spec, settings)
    ci.ci_identity(comp, spec.ci, settings, bucket=ASSETS, bucket_name=cdn.bucket_name)
    _backend(comp, app, remote, settings, api_origin(comp, spec, settings))
    _on_delete(comp, settings)
    report_status(
        comp,
        Parts(
            namespace=NAMESPACE,
            database=DATABASE,
            bucket=ASSETS,
            cdn=CDN,
            deployment=DEPLOYMENT,
            service=SERVICE,
            user=USER_JOB,
            root_password=ROOT_JOB if ROOT_JOB in comp.desired else None,
            connection=CONNECTION_COPY if _copied(comp, remote) else None,
        ),
        app=app,
        bucket_name=cdn.bucket_name,
        cdn=cdn,
    )


def _place(comp: Composition, spec: EnvironmentSpec) -> PrivateNetwork | None:
    """Cloud and region from the claim; the account, project or resource group from the
    environment (needed only by the builders that name it; an error on its key then). Returns
    the private network of the region, for the database."""
    group = spec.cloud
    section = cloud_settings(comp.env, group)
    scope = scope_from_environment(comp.env, group)
    region = spec.region or section.get("defaultRegion")
    if not isinstance(region, str) or not region:
        raise InputError(
            "spec.region", f"required: the platform sets no environment.{group}.defaultRegion"
        )
    check_region(
        comp, group, region, "spec.region" if spec.region else f"environment.{group}.defaultRegion"
    )
    comp.place(
        spec.cloud,
        cloud_field="spec.cloud",
        region=region,
        region_field="spec.region",
        scope=scope.value,
        scope_field=scope.field,
    )
    return _private_network_of(comp, section, group, region)


#: What holds the environment's data: the database and the asset bucket, and what the cloud
#: will not delete while they exist (AWS: the DB subnet group and security group).
DATA_FAMILIES = (DATABASE, ASSETS)


def _on_delete(comp: Composition, settings: EnvironmentSettings) -> None:
    """Deleting the environment always finishes; ``dataOnDelete`` says what stays.

    ``keep``: every managed resource of the database and bucket families is orphaned (the
    database, its subnet group and security group the cloud would refuse to delete while it
    exists, the bucket with its settings): Crossplane deletes them from Kubernetes only. The
    ``DataOnDelete`` condition names them. ``delete``: the bucket is force-destroyed with its
    objects, the database goes without a final snapshot (nothing is left behind to clean).
    Either way no deletion waits forever on a bucket that still holds objects.
    """
    if settings.dataOnDelete == "delete":
        comp.condition(
            "DataOnDelete",
            True,
            "DeletedWithEnvironment",
            "deleting this environment deletes its database (no final snapshot) "
            "and its asset bucket with every object",
        )
        return
    kept = sorted(
        name
        for name, emitted in comp.desired.items()
        if name.startswith(DATA_FAMILIES) and kind_of(emitted.body).managed
    )
    if ROOT_NAMESPACE in comp.desired and not comp.namespaced:
        # the kept database's generated password (the namespaced form's is in the
        # composite's namespace, which deleting the environment leaves alone)
        kept.append(ROOT_NAMESPACE)
    for name in kept:
        comp.keep_on_delete(name)
    comp.condition(
        "DataOnDelete",
        True,
        "KeptOnDelete",
        "deleting this environment keeps its database and asset bucket in the cloud "
        f"(deletionPolicy Orphan: {', '.join(kept) or 'none yet'}); remove them "
        "there when no longer needed",
    )


def _private_network_of(
    comp: Composition, section: Mapping[str, Any], cloud: Cloud, region: str
) -> PrivateNetwork | None:
    """The private network of ``region``, from ``<cloud>.privateNetworks.<region>``.

    A database must join a network in its own region (AWS: a DB subnet group's subnets, Azure:
    a delegated subnet of the region's VNet); a network of another region composes a database
    the cloud refuses only at creation, long after the claim was accepted. The chosen network
    goes to the builder in ``DatabaseSpec.network`` with the field it was written in
    (``environment.aws.privateNetworks.eu-west-1``), so an error about it names that field.
    None on a global-network cloud whose platform names none (the builder says it needs one).

    The single-network form (``privateNetwork`` alone) is accepted only where one network
    serves every region (``global_private_network``: GCP, whose VPC networks are
    global). Elsewhere its region cannot be checked, since AWS VPC and subnet ids and Azure
    resource ids do not name it, so a new environment is refused saying where to move it.
    Builds before 0.1.0 shipped that form on AWS (one network for every region): an
    environment whose database exists keeps composing with it (:func:`_deprecated_network`).
    """
    networks = section.get("privateNetworks")
    global_network = global_private_network(cloud)
    if "privateNetwork" in section and not global_network:
        if comp.is_observed(DATABASE):
            return _deprecated_network(comp, section, cloud, region)
        raise InputError(
            f"environment.{cloud}.privateNetwork",
            f"one network for every region is not accepted on {cloud}: a database must join "
            "a network in its own region, and the network's ids do not say which region "
            f"that is (a database in another region would fail only when {cloud} creates "
            f"it); name it by its region instead: environment.{cloud}.privateNetworks."
            f"<region> (this claim asks for {region})",
        )
    if networks is None:
        if not global_network:
            raise InputError(
                f"environment.{cloud}.privateNetworks",
                "required for a database: the private network of each region the platform "
                f"serves, by region (this claim asks for {region})",
            )
        single = section.get("privateNetwork")
        if single is not None and not isinstance(single, Mapping):
            raise InputError(f"environment.{cloud}.privateNetwork", "must be an object")
        return PrivateNetwork(single, f"environment.{cloud}.privateNetwork") if single else None
    if not isinstance(networks, Mapping):
        raise InputError(
            f"environment.{cloud}.privateNetworks", "must map regions to private networks"
        )
    if region not in networks:
        configured = ", ".join(sorted(networks)) or "none"
        raise InputError(
            "spec.region",
            f"{region} has no private network on {cloud}; the "
            f"platform configures {configured} (environment.{cloud}."
            "privateNetworks)",
        )
    chosen = networks[region]
    if not isinstance(chosen, Mapping):
        raise InputError(f"environment.{cloud}.privateNetworks.{region}", "must be an object")
    return PrivateNetwork(chosen, f"environment.{cloud}.privateNetworks.{region}")


def _deprecated_network(
    comp: Composition, section: Mapping[str, Any], cloud: Cloud, region: str
) -> PrivateNetwork:
    """The network of an environment whose database exists, where the platform still writes
    ``<cloud>.privateNetwork``, with a Warning naming the shape to move to.

    An existing composite keeps composing with the settings it converged with (the database
    exists, so the network was the right one for its region); refusing it would stop every
    change to it. ``privateNetworks.<region>``, where the platform also wrote it, wins. A new
    environment with the single form is still refused (:func:`_private_network_of`).
    """
    single_field = f"environment.{cloud}.privateNetwork"
    regional_field = f"environment.{cloud}.privateNetworks.{region}"
    networks = section.get("privateNetworks")
    if isinstance(networks, Mapping) and isinstance(networks.get(region), Mapping):
        comp.event(
            f"{single_field} is deprecated and ignored here: this environment uses "
            f"{regional_field}; remove {single_field} (a new environment is refused "
            "while it is set)",
            warning=True,
            reason="DeprecatedSetting",
        )
        return PrivateNetwork(networks[region], regional_field)
    single = section["privateNetwork"]
    if not isinstance(single, Mapping):
        raise InputError(single_field, "must be an object")
    comp.event(
        f"{single_field} (one network for every region) is deprecated: this "
        f"environment's database exists, so it keeps that network; move it to "
        f"{regional_field} (a new environment is refused while only {single_field} "
        f"is set: its database could join another region's network)",
        warning=True,
        reason="DeprecatedSetting",
    )
    return PrivateNetwork(single, single_field)


def _database(
    comp: Composition,
    spec: EnvironmentSpec,
    remote: str | None,
    settings: EnvironmentSettings,
    *,
    admin_ns: str,
    network: PrivateNetwork | None,
) -> DatabaseSpec:
    """The database, writing its administrator's connection Secret into the admin namespace
    (never the app's), or, where the provider cannot write there (another cluster; the
    namespaced form, whose managed resources write only into their own namespace), beside
    the database for an Object to copy."""
    _no_engine_downgrade(comp, spec.database.engineVersion)
    copied = _copied(comp, remote)
    if not copied:
        secret, secret_namespace, uses = user.ADMIN_SECRET, admin_ns, [ADMIN_NAMESPACE]
    else:
        secret = f"{comp.resource_name(DATABASE)}-connection"
        secret_namespace = (comp.namespace if comp.namespaced else None) or CROSSPLANE_NAMESPACE
        uses = []
    database = DatabaseSpec(
        size=spec.database.size,
        engine_version=spec.database.engineVersion,
        database_name=manifests.DATABASE_NAME,
        connection_secret=secret,
        connection_namespace=secret_namespace,
        final_snapshot=settings.dataOnDelete == "keep",
        password_secret=_generated_password(comp, settings),
        network=network,
    )
    if database.password_secret is not None:
        uses = [*uses, ROOT_NAMESPACE] if not comp.namespaced else uses
        if not (comp.is_observed(DATABASE) or _password_in_place(comp)):
            return database
    add_database(
        comp,
        DATABASE,
        database,
        uses=uses,
        fields={
            "size": "spec.database.size",
            "engine_version": "spec.database.engineVersion",
            "network": f"environment.{spec.cloud}.privateNetwork",
        },
    )
    if copied and (
        comp.is_observed(CONNECTION_COPY)
        or comp.needs_connection(DATABASE, by=CONNECTION_COPY) is not None
    ):
        add_object(
            comp,
            CONNECTION_COPY,
            user.admin_secret(admin_ns),
            provider_config=remote,
            uses=[ADMIN_NAMESPACE],
            references=manifests.connection_copy_references(secret, secret_namespace),
        )
    return database


def _generated_password(comp: Composition, settings: EnvironmentSettings) -> SecretKey | None:
    """Where the administrator's password is generated, where neither the provider nor the
    platform makes one (GCP without ``gcp.databasePasswordSecretRef``): a Job on the
    Crossplane cluster writes it once into a Secret of this environment (see
    ``password.py``). None where the provider or the platform makes it."""
    if database_password_source(comp) != "generated":
        return None
    job_namespace = dns_label(comp.name, "dbroot")
    root = password.RootPassword(
        job_namespace=job_namespace,
        secret=dns_label(comp.name, "db-root-password"),
        # a namespaced managed resource reads Secrets only from its own namespace
        secret_namespace=(comp.namespace or job_namespace) if comp.namespaced else job_namespace,
    )
    local = root.secret_namespace == root.job_namespace
    add_object(comp, ROOT_NAMESPACE, password.namespace(root))
    add_object(comp, ROOT_ACCOUNT, password.service_account(root), uses=[ROOT_NAMESPACE])
    add_object(comp, ROOT_ROLE, password.role(root), uses=[ROOT_NAMESPACE] if local else [])
    add_object(
        comp, ROOT_BINDING, password.role_binding(root), uses=[ROOT_NAMESPACE] if local else []
    )
    add_object(
        comp,
        ROOT_JOB,
        password.job(root, kubectl_image=settings.databaseUser.kubectlImage),
        readiness=ObjectReadiness.cel(user.JOB_COMPLETE),
        uses=[ROOT_NAMESPACE, ROOT_ACCOUNT, ROOT_BINDING],
    )
    return SecretKey(name=root.secret, namespace=root.secret_namespace, key=password.PASSWORD_KEY)


def _password_in_place(comp: Composition) -> bool:
    """Whether the generated password's Job has completed; records the hold if not."""
    if comp.is_ready(ROOT_JOB):
        return True
    comp.hold(DATABASE, Wait(ROOT_JOB, "complete (the generated administrator password)"))
    return False


def _no_engine_downgrade(comp: Composition, wanted: str) -> None:
    """A lower PostgreSQL major than the database runs is refused: no cloud downgrades in
    place (RDS, Cloud SQL and flexible servers upgrade majors only), and the provider would
    fail on every reconcile. The version is remembered in status once the database exists.
    A higher one is an in-place upgrade (see the cloud builders)."""
    known = comp.recorded("databaseEngineVersion")
    if known and int(wanted) < int(str(known)):
        raise InputError(
            "spec.database.engineVersion",
            f"cannot go back from PostgreSQL {known} to {wanted}: no cloud "
            "downgrades a database in place; restore a dump into a new "
            "environment instead",
        )
    comp.remember("databaseEngineVersion", wanted if comp.is_observed(DATABASE) else None)


def bucket_name(comp: Composition, prefix: str | None, app_name: str) -> str:
    """``<prefix>-<appName>-<8 hex>``: the prefix is the platform's (bucket names are global
    across every user of S3 and GCS), the suffix from the composite's uid (its name when it
    has none yet: :meth:`~Composition.uid_hex` with the name as fallback, the seed these
    names always had), so two squads' apps of the same name never collide."""
    if not prefix:
        raise InputError(
            "environment.frontend.bucketPrefix",
            "required: asset buckets are named <prefix>-<appName>-<8 hex>, and "
            "S3 and GCS bucket names are global, so the platform names its own "
            "prefix (e.g. acme-mfe)",
        )
    name = f"{prefix}-{app_name}-{comp.uid_hex(comp.name)}"
    if len(name) > BUCKET_NAME_MAX:
        most = BUCKET_NAME_MAX - len(prefix) - UID_SUFFIX_LENGTH - 2
        raise InputError(
            "spec.frontend.appName",
            f"at most {most} characters with the platform's bucket prefix "
            f"{prefix!r}: the bucket name {name} would be over {BUCKET_NAME_MAX}",
        )
    return name


def _frontend(
    comp: Composition,
    spec: EnvironmentSpec,
    settings: EnvironmentSettings,
) -> CdnSpec:
    """The private asset bucket and the CDN in front of it; returns the CDN's spec (with the
    bucket's name).

    The bucket is never public: the CDN is its named reader (where the cloud reads buckets
    through a principal). Each asset sync leaves the replaced objects as noncurrent versions;
    they expire after 30 days so the bucket doesn't grow with every deploy.
    """
    wanted = bucket_name(comp, settings.frontend.bucketPrefix, spec.frontend.appName)
    reader = cdn_bucket_reader(comp, CDN)
    assets = BucketSpec(
        bucket_name=bucket_name_from(comp, wanted),
        readers=(reader,) if reader else (),
        noncurrent_expire_after_days=NONCURRENT_ASSET_DAYS,
        force_destroy=settings.dataOnDelete == "delete",
    )
    add_bucket(comp, ASSETS, assets, fields={"bucket_name": "spec.frontend.appName"})
    name = bucket_address(comp, ASSETS, assets.bucket_name)["name"]
    known = comp.recorded("frontendBucketName")
    comp.refuse_change(
        "spec.frontend.appName",
        known,
        name,
        f"cannot change once the bucket exists: it names bucket {known} (the new name "
        f"{name}, from the app name and the platform's frontend.bucketPrefix, would replace "
        "the bucket and its assets); create a new environment instead",
    )
    domain = settings.frontend.domain
    api = settings.api
    cdn = CdnSpec(
        bucket=ASSETS,
        bucket_name=name,
        paths=tuple(CdnPath(m.name, m.path) for m in spec.frontend.microFrontends),
        hostname=f"{spec.frontend.appName}.{domain}" if domain else None,
        api_origin=api_origin(comp, spec, settings),
        api_path=API_PATH,
        api_backend=api.gcpBackendService if api else None,
        custom_domains=tuple(spec.frontend.customDomains),
    )
    add_cdn(comp, CDN, cdn, fields={"custom_domains": "spec.frontend.customDomains"})
    return cdn


def api_origin(
    comp: Composition, spec: EnvironmentSpec, settings: EnvironmentSettings
) -> str | None:
    """``<appName>-<8 hex>.<api.originDomain>``: the backend's host on the platform's ingress,
    one DNS label under the platform's wildcard record and certificate (the same suffix as the
    bucket, so two squads' apps of one name never share a host)."""
    if settings.api is None:
        return None
    return f"{spec.frontend.appName}-{comp.uid_hex(comp.name)}.{settings.api.originDomain}"


def _app_user(
    comp: Composition,
    app: App,
    remote: str | None,
    settings: EnvironmentSettings,
    *,
    admin_ns: str,
    admin_env: list[dict[str, Any]],
) -> None:
    """The app's own database user: the Job's ServiceAccount (admin namespace), its right to
    write the app's Secret (app namespace), and the Job once the administrator's Secret is in
    the admin namespace (see ``user.py``)."""
    add_object(
        comp,
        USER_ACCOUNT,
        user.service_account(admin_ns),
        provider_config=remote,
        uses=[ADMIN_NAMESPACE],
    )
    add_object(comp, USER_ROLE, user.role(app), provider_config=remote, uses=[NAMESPACE])
    add_object(
        comp,
        USER_BINDING,
        user.role_binding(app, admin_ns),
        provider_config=remote,
        uses=[NAMESPACE],
    )
    if comp.is_observed(USER_JOB) or _admin_secret_in_place(comp, _copied(comp, remote)):
        images = settings.databaseUser
        add_object(
            comp,
            USER_JOB,
            user.job(
                app,
                admin_ns,
                admin_env,
                kubectl_image=images.kubectlImage,
                postgres_image=images.postgresImage,
            ),
            provider_config=remote,
            readiness=ObjectReadiness.cel(user.JOB_COMPLETE),
            uses=[ADMIN_NAMESPACE, USER_ACCOUNT, USER_BINDING],
        )


def _backend(
    comp: Composition, app: App, remote: str | None, settings: EnvironmentSettings, host: str | None
) -> None:
    """The backend Deployment (once the app's user and Secret exist), its Service, and the
    Ingress on the platform's ingress for the CDN's ``/api/*`` (when the platform names one)."""
    if comp.is_observed(DEPLOYMENT) or _user_in_place(comp):
        add_object(
            comp,
            DEPLOYMENT,
            manifests.deployment(app),
            provider_config=remote,
            readiness=ObjectReadiness.AVAILABLE,
            uses=[NAMESPACE],
        )
    add_object(comp, SERVICE, manifests.service(app), provider_config=remote, uses=[NAMESPACE])
    if host and settings.api is not None:
        add_object(
            comp,
            INGRESS,
            manifests.ingress(app, host, API_PATH, settings.api.ingressClassName),
            provider_config=remote,
            uses=[NAMESPACE, SERVICE],
        )


def _copied(comp: Composition, remote: str | None) -> bool:
    """Whether the connection Secret reaches the pods' namespace through a copy: the app runs
    on another cluster, or the namespaced form's database writes only into the composite's
    namespace (a managed resource's connection Secret stays in its own namespace)."""
    return remote is not None or comp.namespaced


def _admin_secret_in_place(comp: Composition, copied: bool) -> bool:
    """Whether the administrator's Secret is in the admin namespace; records the hold if not."""
    if not copied:
        return comp.needs_connection(DATABASE, by=USER_JOB) is not None
    if comp.is_ready(CONNECTION_COPY):
        return True
    comp.hold(USER_JOB, Wait(CONNECTION_COPY, "Ready (the copied administrator Secret)"))
    return False


def _user_in_place(comp: Composition) -> bool:
    """Whether the Job has created the app's user and Secret; records the hold if not."""
    if comp.is_ready(USER_JOB):
        return True
    comp.hold(DEPLOYMENT, Wait(USER_JOB, "complete (the app's database user and its Secret)"))
    return False
