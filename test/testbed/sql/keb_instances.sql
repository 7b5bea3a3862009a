-- KEB's instances table as the hap-reconciler job sees it: the columns it
-- reads, with KEB's names, types and defaults. KEB's own schema has no index
-- on subscription_secret_name: the job's queries must be fine with a
-- sequential scan. The read path's index, which KEB adds when it adopts the
-- table (schema.KEBIndexUp in the provisioning module), is applied after this file.
CREATE TABLE instances (
    instance_id                    varchar(255) PRIMARY KEY,
    runtime_id                     varchar(255) NOT NULL,
    global_account_id              varchar(255) NOT NULL,
    subscription_global_account_id text         DEFAULT '',
    sub_account_id                 varchar(255) DEFAULT '',
    subscription_secret_name       varchar(253) DEFAULT '',
    provider                       varchar(255) DEFAULT '',
    provider_region                varchar(32)  DEFAULT '',
    service_plan_name              varchar(255) DEFAULT '',
    provisioning_parameters        text         NOT NULL,
    created_at                     timestamptz  NOT NULL,
    updated_at                     timestamptz  NOT NULL,
    deleted_at                     timestamptz  NOT NULL DEFAULT '0001-01-01 00:00:00+00',
    expired_at                     timestamptz  NULL
);
-- KEB's one index besides the key (resources/keb/migrations/202403051613_add_indexes.up.sql).
CREATE INDEX instances_by_created_at ON instances USING btree (created_at);

-- KEB's operations and events, with the columns the shadow job reads
-- (resources/keb/migrations/202002121000_add_operations.up.sql and
-- 202209211320_events.up.sql) and the indexes its query goes through
-- (operations_by_instance_id from 202103251452_add_indexes.up.sql,
-- events_operation_id). KEB's other columns are left out.
CREATE TABLE operations (
    id          varchar(255) PRIMARY KEY,
    instance_id varchar(255) NOT NULL,
    type        varchar(32)  NOT NULL,
    created_at  timestamptz  NOT NULL
);
CREATE INDEX operations_by_instance_id ON operations USING btree (instance_id);
CREATE TABLE events (
    id           varchar(255) NOT NULL PRIMARY KEY,
    instance_id  varchar(255),
    operation_id varchar(255) REFERENCES operations (id),
    message      text NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX events_operation_id ON events USING HASH (operation_id);
