"""The AWS kinds the builders emit: storage versions of provider-upjet-aws v2.6.0.

Each kind is declared once with its traits (tag form, statefulness); see :mod:`fnplatform.kinds`.
"""

from __future__ import annotations

from fnplatform.clouds.aws.tags import AWS_TAGS
from fnplatform.kinds import register

VPC = register("ec2.aws.upbound.io/v1beta1", "VPC", tag_style=AWS_TAGS)
SUBNET = register("ec2.aws.upbound.io/v1beta1", "Subnet", tag_style=AWS_TAGS)
INTERNET_GATEWAY = register("ec2.aws.upbound.io/v1beta1", "InternetGateway", tag_style=AWS_TAGS)
EIP = register("ec2.aws.upbound.io/v1beta1", "EIP", tag_style=AWS_TAGS)
NAT_GATEWAY = register("ec2.aws.upbound.io/v1beta1", "NATGateway", tag_style=AWS_TAGS)
ROUTE_TABLE = register("ec2.aws.upbound.io/v1beta1", "RouteTable", tag_style=AWS_TAGS)
ROUTE = register("ec2.aws.upbound.io/v1beta2", "Route")
ROUTE_TABLE_ASSOCIATION = register("ec2.aws.upbound.io/v1beta1", "RouteTableAssociation")
LAUNCH_TEMPLATE = register("ec2.aws.upbound.io/v1beta2", "LaunchTemplate", tag_style=AWS_TAGS)
EKS_CLUSTER = register("eks.aws.upbound.io/v1beta2", "Cluster", tag_style=AWS_TAGS, stateful=True)
NODE_GROUP = register("eks.aws.upbound.io/v1beta2", "NodeGroup", tag_style=AWS_TAGS, stateful=True)
CLUSTER_AUTH = register("eks.aws.upbound.io/v1beta1", "ClusterAuth")
ADDON = register("eks.aws.upbound.io/v1beta1", "Addon", tag_style=AWS_TAGS)
POD_IDENTITY_ASSOCIATION = register(
    "eks.aws.upbound.io/v1beta1", "PodIdentityAssociation", tag_style=AWS_TAGS
)
IAM_ROLE = register("iam.aws.upbound.io/v1beta1", "Role", tag_style=AWS_TAGS)
IAM_POLICY = register("iam.aws.upbound.io/v1beta1", "Policy", tag_style=AWS_TAGS)
ROLE_POLICY_ATTACHMENT = register("iam.aws.upbound.io/v1beta1", "RolePolicyAttachment")
OIDC_PROVIDER = register("iam.aws.upbound.io/v1beta1", "OpenIDConnectProvider", tag_style=AWS_TAGS)
ZONE = register("route53.aws.upbound.io/v1beta1", "Zone", tag_style=AWS_TAGS, stateful=True)

# -- storage, keys, ingress, failover (contact-center and environment) ---------------------------
# Losing a bucket or a key loses the recordings: stateful. S3 bucket settings are their own
# kinds (provider v4+ split); only the Bucket carries tags.
BUCKET = register("s3.aws.upbound.io/v1beta2", "Bucket", tag_style=AWS_TAGS, stateful=True)
BUCKET_SSE = register("s3.aws.upbound.io/v1beta2", "BucketServerSideEncryptionConfiguration")
BUCKET_VERSIONING = register("s3.aws.upbound.io/v1beta2", "BucketVersioning")
BUCKET_PUBLIC_ACCESS_BLOCK = register("s3.aws.upbound.io/v1beta1", "BucketPublicAccessBlock")
BUCKET_OWNERSHIP = register("s3.aws.upbound.io/v1beta2", "BucketOwnershipControls")
BUCKET_POLICY = register("s3.aws.upbound.io/v1beta1", "BucketPolicy")
BUCKET_OBJECT_LOCK = register("s3.aws.upbound.io/v1beta2", "BucketObjectLockConfiguration")
BUCKET_LOGGING = register("s3.aws.upbound.io/v1beta2", "BucketLogging")
BUCKET_LIFECYCLE = register("s3.aws.upbound.io/v1beta1", "BucketLifecycleConfiguration")
BUCKET_REPLICATION = register("s3.aws.upbound.io/v1beta2", "BucketReplicationConfiguration")
KMS_KEY = register("kms.aws.upbound.io/v1beta1", "Key", tag_style=AWS_TAGS, stateful=True)
KMS_ALIAS = register("kms.aws.upbound.io/v1beta1", "Alias")
HEALTH_CHECK = register("route53.aws.upbound.io/v1beta1", "HealthCheck", tag_style=AWS_TAGS)
RECORD = register("route53.aws.upbound.io/v1beta2", "Record")

# -- database and CDN (environment) ------------------------------------------------------------
DB_INSTANCE = register("rds.aws.upbound.io/v1beta3", "Instance", tag_style=AWS_TAGS, stateful=True)
DB_SUBNET_GROUP = register("rds.aws.upbound.io/v1beta1", "SubnetGroup", tag_style=AWS_TAGS)
DB_PARAMETER_GROUP = register("rds.aws.upbound.io/v1beta1", "ParameterGroup", tag_style=AWS_TAGS)
SECURITY_GROUP = register("ec2.aws.upbound.io/v1beta1", "SecurityGroup", tag_style=AWS_TAGS)
SECURITY_GROUP_INGRESS_RULE = register(
    "ec2.aws.upbound.io/v1beta1", "SecurityGroupIngressRule", tag_style=AWS_TAGS
)
DISTRIBUTION = register("cloudfront.aws.upbound.io/v1beta2", "Distribution", tag_style=AWS_TAGS)
ORIGIN_ACCESS_CONTROL = register("cloudfront.aws.upbound.io/v1beta1", "OriginAccessControl")
#: CloudFront's custom-domain certificate (always in us-east-1) and its DNS validation.
ACM_CERTIFICATE = register("acm.aws.upbound.io/v1beta2", "Certificate", tag_style=AWS_TAGS)
ACM_CERTIFICATE_VALIDATION = register("acm.aws.upbound.io/v1beta1", "CertificateValidation")
