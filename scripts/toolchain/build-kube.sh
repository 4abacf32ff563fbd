#!/usr/bin/env bash
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from k8s.io/kubernetes
# (a wrapper module; see kube_resolve and kube_build in lib.sh).
source "$(dirname "$0")/lib.sh"
kube_build kube kube-apiserver kube-controller-manager kube-scheduler kubectl
