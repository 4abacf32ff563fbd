"""Provision Kafka on Kubernetes/OpenShift from stack config and sizing (Pulumi)."""
