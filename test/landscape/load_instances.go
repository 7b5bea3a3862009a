package landscape

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// instanceColumns are the columns of KEB's instances table the landscape
// fills, with KEB's names.
var instanceColumns = []string{
	"instance_id", "runtime_id", "global_account_id", "subscription_global_account_id", "sub_account_id",
	"subscription_secret_name", "provider", "provider_region", "service_plan_name", "provisioning_parameters",
	"created_at", "updated_at", "deleted_at", "expired_at",
}

// LoadInstances copies the landscape's instance rows into the instances
// table of the database at databaseURL in one COPY, which the table must
// already exist for.
func LoadInstances(ctx context.Context, databaseURL string, l *Landscape) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("load instances: connect: %w", err)
	}
	defer conn.Close(context.Background())
	// Rows are handed to COPY one at a time as it sends them, so a large
	// landscape's table is not built a second time in memory.
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"instances"}, instanceColumns, pgx.CopyFromSlice(len(l.Instances), func(k int) ([]any, error) {
		i := l.Instances[k]
		return []any{
			i.InstanceID, i.RuntimeID, i.GlobalAccountID, i.SubscriptionGlobalAccountID, i.SubAccountID,
			i.SubscriptionSecretName, i.Provider, i.ProviderRegion, i.ServicePlanName, i.ProvisioningParameters,
			i.CreatedAt, i.UpdatedAt, i.DeletedAt, i.ExpiredAt,
		}, nil
	}))
	if err != nil {
		return fmt.Errorf("load instances: copy %d rows: %w", len(l.Instances), err)
	}
	if int(n) != len(l.Instances) {
		return fmt.Errorf("load instances: copied %d rows, want %d", n, len(l.Instances))
	}
	return nil
}
