module github.com/kyma-project/hap-reconciler/provisioning

go 1.24
