// Command cert-manager-controller runs cert-manager's own controllers, from its published
// module, for the local cluster: the ones a kafkastack stack's certificates go through (the
// self-signed and CA issuers, the certificate life cycle from trigger to renewal, the approver).
//
// Why not cert-manager's binary: it lives in the module github.com/cert-manager/cert-manager/
// cmd/controller, which the Go module proxy reachable here refuses; the module that holds the
// controllers (github.com/cert-manager/cert-manager) is served. This file only starts them as
// that binary's Run does (cmd/controller/app): one context factory, each registered controller
// built from it, then the shared informers. It leaves out what a one-replica local run has no
// use for: leader election, the metrics and health servers, ACME, Vault, Venafi and the shims.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The issuer kinds the issuers controllers can set up (each registers itself).
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// The controllers a CA or self-signed issuer needs, by their registered names.
var enabled = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crca.CRControllerName,
	crselfsigned.CRControllerName,
}

// cert-manager's defaults: workers per controller, and its API client's rate limits.
const (
	workers  = 5
	apiQPS   = 20
	apiBurst = 50
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig")
	resourceNamespace := flag.String("cluster-resource-namespace", "kube-system",
		"where ClusterIssuers keep their Secrets")
	version := flag.Bool("version", false, "print the cert-manager module version and exit")
	flag.Parse()
	if *version {
		fmt.Println(moduleVersion())
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *resourceNamespace); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-controller:", err)
		os.Exit(1)
	}
}

func run(rootCtx context.Context, kubeconfig, resourceNamespace string) error {
	rootCtx = logf.NewContext(rootCtx, logf.Log, "controller")
	factory, err := controller.NewContextFactory(rootCtx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   apiQPS,
		KubernetesAPIBurst: apiBurst,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: resourceNamespace},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	known := controller.Known()
	group, ctx := errgroup.WithContext(rootCtx)
	for _, name := range enabled {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered by this cert-manager module", name)
		}
		ctrl, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %q: %w", name, err)
		}
		group.Go(func() error { return ctrl.Run(workers, ctx) })
	}
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "cert-manager-controller %s: running %v\n", moduleVersion(), enabled)
	return group.Wait()
}
