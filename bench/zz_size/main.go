package main

import (
	"context"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/hap-reconciler/testbed/landscape"
)

func main() {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Args[1])
	if err != nil { panic(err) }
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "size-"}}, metav1.CreateOptions{})
	if err != nil { panic(err) }
	l := landscape.Generate(landscape.Options{Seed: 7, GlobalAccounts: 30})
	if err := landscape.LoadGardener(ctx, cfg, ns.Name, l, nil); err != nil { panic(err) }
	hc, _ := rest.HTTPClientFor(cfg)
	resp, err := hc.Get(cfg.Host + "/apis/core.gardener.cloud/v1beta1/namespaces/" + ns.Name + "/shoots")
	if err != nil { panic(err) }
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d shoots, served %.1f KB per shoot\n", len(l.Shoots), float64(len(b))/float64(len(l.Shoots))/1024)
}
