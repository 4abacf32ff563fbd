#!/usr/bin/env bash
# kubelet and kube-proxy for real nodes: the same k8s.io/kubernetes wrapper module and committed
# pins (part `kube`) as the control plane, so every Kubernetes binary is one version.
source "$(dirname "$0")/lib.sh"
kube_build kubelet kubelet kube-proxy
