/**
 * The tables `POST /query` serves, with the columns and Arrow types of Restate 1.7.12
 * (reference-behavior.md §3.6; the full list is ref-transcripts/sql-tables-columns.txt).
 *
 * Every table lives in `restate.public`, as in the reference (its "table not found" error
 * names `restate.public.<t>`). Tables we do not fill yet are served empty, with their columns.
 */

/** The Arrow types the reference uses. Strings and binaries are the Large variants. */
export type ColumnType = 'utf8' | 'u64' | 'u32' | 'bool' | 'ts' | 'dur' | 'bin' | 'list_u32' | 'list_utf8';

export interface ColumnDef {
  name: string;
  type: ColumnType;
  nullable: boolean;
}

export interface TableDef {
  name: string;
  /** Where the table is served: `public` for data, `information_schema` for the catalog. */
  schema: 'public' | 'information_schema';
  columns: ColumnDef[];
}

export const CATALOG = 'restate';

/** How Arrow prints each type (information_schema.columns.data_type, sql-tables-columns.txt). */
export const ARROW_TYPE_NAME: Record<ColumnType, string> = {
  utf8: 'LargeUtf8',
  u64: 'UInt64',
  u32: 'UInt32',
  bool: 'Boolean',
  ts: 'Timestamp(ms, "+00:00")',
  dur: 'Duration(ms)',
  bin: 'LargeBinary',
  list_u32: 'List(UInt32)',
  list_utf8: 'List(LargeUtf8)',
};

/** `name:type` pairs separated by spaces; a trailing `!` marks a non-nullable column. */
function columns(spec: string): ColumnDef[] {
  return spec.split(/\s+/).map((item) => {
    const [name, rawType] = item.split(':') as [string, string];
    const nullable = !rawType.endsWith('!');
    return { name, type: rawType.replace('!', '') as ColumnType, nullable };
  });
}

// Transcribed from ref-transcripts/sql-tables-columns.txt, in the reference's column order.
const PUBLIC_SPECS: Record<string, string> = {
  state:
    'partition_key:u64 scope:utf8 service_name:utf8 service_key:utf8 key:utf8 key_length:u64 value_utf8:utf8 value:bin value_length:u64',
  sys_deployment:
    'id:utf8 ty:utf8 endpoint:utf8 created_at:ts min_service_protocol_version:u32 max_service_protocol_version:u32 services:list_utf8',
  sys_inbox: 'partition_key:u64 service_name:utf8 service_key:utf8 id:utf8 sequence_number:u64 created_at:ts',
  sys_invocation:
    'id:utf8 vqueue_id:utf8 target:utf8 target_service_name:utf8 target_service_key:utf8 target_handler_name:utf8 ' +
    'target_service_ty:utf8 scope:utf8 limit_key:utf8 idempotency_key:utf8 invoked_by:utf8 invoked_by_service_name:utf8 ' +
    'invoked_by_id:utf8 invoked_by_subscription_id:utf8 invoked_by_target:utf8 restarted_from:utf8 pinned_deployment_id:utf8 ' +
    'pinned_service_protocol_version:u32 trace_id:utf8 journal_size:u32 journal_commands_size:u32 created_at:ts ' +
    'created_using_restate_version:utf8 modified_at:ts inboxed_at:ts scheduled_at:ts scheduled_start_at:ts running_at:ts ' +
    'completed_at:ts completion_retention:dur journal_retention:dur suspended_waiting_for_completions:list_u32 ' +
    'suspended_waiting_for_signals:list_u32 suspended_waiting_future_json:utf8 retry_count:u64 last_start_at:ts ' +
    'next_retry_at:ts last_attempt_deployment_id:utf8 last_attempt_server:utf8 last_failure:utf8 last_failure_error_code:utf8 ' +
    'last_failure_related_entry_index:u64 last_failure_related_entry_name:utf8 last_failure_related_entry_type:utf8 ' +
    'last_failure_related_command_index:u64 last_failure_related_command_name:utf8 last_failure_related_command_type:utf8 ' +
    'last_awaiting_on_future_json:utf8 status:utf8! completion_result:utf8 completion_failure:utf8',
  sys_invocation_state:
    'partition_key:u64 id:utf8 in_flight:bool retry_count:u64 last_start_at:ts last_attempt_deployment_id:utf8 ' +
    'last_attempt_server:utf8 next_retry_at:ts last_failure:utf8 last_failure_error_code:utf8 ' +
    'last_failure_related_command_index:u64 last_failure_related_command_name:utf8 last_failure_related_command_type:utf8 ' +
    'last_failure_related_entry_index:u64 last_failure_related_entry_name:utf8 last_failure_related_entry_type:utf8 ' +
    'last_awaiting_on_future_json:utf8',
  sys_invocation_status:
    'partition_key:u64 id:utf8 vqueue_id:utf8 status:utf8 completion_result:utf8 completion_failure:utf8 target:utf8 ' +
    'target_service_name:utf8 target_service_key:utf8 target_handler_name:utf8 target_service_ty:utf8 scope:utf8 ' +
    'limit_key:utf8 idempotency_key:utf8 invoked_by:utf8 invoked_by_id:utf8 invoked_by_subscription_id:utf8 ' +
    'invoked_by_service_name:utf8 invoked_by_target:utf8 restarted_from:utf8 pinned_deployment_id:utf8 ' +
    'pinned_service_protocol_version:u32 trace_id:utf8 journal_size:u32 journal_commands_size:u32 created_at:ts ' +
    'created_using_restate_version:utf8 modified_at:ts inboxed_at:ts scheduled_at:ts scheduled_start_at:ts running_at:ts ' +
    'completed_at:ts completion_retention:dur journal_retention:dur suspended_waiting_for_completions:list_u32 ' +
    'suspended_waiting_for_signals:list_u32 suspended_waiting_future_json:utf8',
  sys_journal:
    'partition_key:u64 id:utf8 index:u32 entry_type:utf8 name:utf8 completed:bool invoked_id:utf8 invoked_target:utf8 ' +
    'sleep_wakeup_at:ts promise_name:utf8 raw:bin raw_length:u64 version:u32 entry_json:utf8 entry_lite_json:utf8 appended_at:ts',
  sys_journal_events:
    'partition_key:u64 id:utf8 after_journal_entry_index:u32 appended_at:ts event_type:utf8 event_json:utf8',
  sys_keyed_service_status: 'partition_key:u64 service_name:utf8 service_key:utf8 invocation_id:utf8',
  sys_locks: 'partition_key:u64 scope:utf8 lock_name:utf8 acquired_at:ts acquired_by:utf8',
  sys_promise:
    'partition_key:u64 scope:utf8 service_name:utf8 service_key:utf8 key:utf8 completed:bool completion_success_value:bin ' +
    'completion_success_value_utf8:utf8 completion_failure:utf8',
  sys_rules: 'pattern:utf8 concurrency:u32 description:utf8 disabled:bool version:u32 last_modified:ts',
  sys_scheduler:
    'partition_key:u64 id:utf8 num_inbox:u64 status:utf8 head_entry_id:utf8 scheduled_at:ts blocked_on:utf8 ' +
    'blocked_on_json:utf8 invoker_concurrency_block_duration:dur throttling_rules_block_duration:dur ' +
    'invoker_throttling_block_duration:dur invoker_memory_block_duration:dur concurrency_rules_block_duration:dur ' +
    'lock_block_duration:dur deployment_concurrency_block_duration:dur',
  sys_service: 'name:utf8 revision:u64 public:bool ty:utf8 deployment_id:utf8',
  sys_user_limits:
    'partition_key:u64 scope:utf8 l1:utf8 l2:utf8 level:utf8 usage:u32 concurrency_limit:u32 rule_pattern:utf8 ' +
    'available:u32 num_waiters:u64',
  sys_vqueue_entry_status:
    'partition_key:u64 entry_id:utf8 vqueue_id:utf8 stage:utf8 status:utf8 has_lock:bool next_at:ts sequence_number:u64 ' +
    'entry_kind:utf8 created_at:ts transitioned_at:ts num_attempts:u32 num_errors:u32 num_pauses:u32 num_suspensions:u32 ' +
    'num_yields:u32 first_attempt_at:ts latest_attempt_at:ts first_runnable_at:ts deployment:utf8 needed_memory:u64 ' +
    'retry_attempts:u32 retry_count_since_last_stored_command:u32 latest_attempt_blocked_on_invoker_concurrency:dur ' +
    'latest_attempt_blocked_on_throttling_rules:dur latest_attempt_blocked_on_invoker_throttling:dur ' +
    'latest_attempt_blocked_on_invoker_memory:dur latest_attempt_blocked_on_concurrency_rules:dur ' +
    'latest_attempt_blocked_on_lock:dur latest_attempt_blocked_on_deployment_concurrency:dur ' +
    'total_blocked_on_invoker_concurrency:dur total_blocked_on_throttling_rules:dur total_blocked_on_invoker_throttling:dur ' +
    'total_blocked_on_invoker_memory:dur total_blocked_on_concurrency_rules:dur total_blocked_on_lock:dur ' +
    'total_blocked_on_deployment_concurrency:dur',
  sys_vqueue_meta:
    'partition_key:u64 id:utf8 is_active:bool queue_is_paused:bool service_name:utf8 scope:utf8 limit_key:utf8 ' +
    'lock_name:utf8 created_at:ts last_enqueued_at:ts last_start_at:ts last_attempt_at:ts last_finish_at:ts ' +
    'avg_queue_duration:dur avg_inbox_duration:dur avg_run_duration:dur avg_suspension_duration:dur ' +
    'avg_end_to_end_duration:dur avg_blocked_on_concurrency_rules:dur avg_blocked_on_invoker_concurrency:dur ' +
    'avg_blocked_on_invoker_throttling:dur avg_blocked_on_lock:dur num_inbox:u64 num_running:u64 num_suspended:u64 ' +
    'num_paused:u64 num_finished:u64',
  sys_vqueues:
    'partition_key:u64 id:utf8 stage:utf8 status:utf8 has_lock:bool run_at:ts sequence_number:u64 entry_id:utf8 ' +
    'entry_kind:utf8 created_at:ts transitioned_at:ts num_attempts:u32 num_errors:u32 num_pauses:u32 num_suspensions:u32 ' +
    'num_yields:u32 first_attempt_at:ts latest_attempt_at:ts first_runnable_at:ts deployment:utf8',
};

/**
 * redstate's own tables, beside the reference's: `sys_invocation_transitions` is each
 * invocation's machine history (design.md, "Visualisation"; store `readHistory`), `index`
 * counting the entries still kept, `from_state` null and `event` `xstate.init` for the first,
 * `failure_json` the failure of each `attemptFailed` (in sys_journal_events' `TransientError`
 * shape: `error_code`, `error_message`, `error_stacktrace`, `related_command_*`,
 * `restate_doc_error_code`).
 * `sys_subscription_progress` is each subscription's consumer (src/subscriptions/): messages
 * acknowledged, invocations in flight, the broker's count of messages not yet acknowledged
 * (`lag`), messages per second over the last 10 s, the last position and failure.
 * `sys_partitions` is who owns each partition (src/cluster/): the node holding its lease, the
 * fencing epoch, when the lease runs out unless renewed; on the embedded store this node owns
 * them all, without a lease.
 * `sys_state_expiry` is each key whose state expires (`state_ttl`): when, unless written again,
 * and the TTL that set it. `sys_schedule` is each schedule (`/schedules`): target, timing
 * (`spec`: the cron expression or the interval), policies, next and last fire.
 */
const REDSTATE_SPECS: Record<string, string> = {
  sys_schedule:
    'id:utf8 target:utf8 target_service_name:utf8 target_service_key:utf8 target_handler_name:utf8 spec:utf8 timezone:utf8 ' +
    'overlap:utf8 catch_up:utf8 paused:bool next_fire_at:ts last_fire_at:ts last_invocation_id:utf8 fires:u64 created_at:ts',
  sys_state_expiry: 'partition_key:u64 scope:utf8 service_name:utf8 service_key:utf8 expires_at:ts state_ttl:dur',
  sys_invocation_transitions:
    'id:utf8 index:u64 from_state:utf8 event:utf8 to_state:utf8 at:ts attempt:u64 failure_json:utf8',
  sys_partitions: 'partition_id:u32! node_id:utf8 epoch:u64! lease_expires_at:ts',
  sys_subscription_progress:
    'id:utf8 source:utf8 sink:utf8 status:utf8 delivered:u64 in_flight:u64 lag:u64 messages_per_second:u64 ' +
    'last_stream:utf8 last_position:utf8 last_message_at:ts last_error:utf8',
};

/**
 * redstate's columns after the reference's in some of its tables (issue 26): a scheduler row's
 * priorities (`head_priority` of the waiter that starts next, `num_inbox_by_priority` as JSON
 * `{"1": n, ...}`) and the backlog bound its queue is closest to (`backlog_limit`, and the
 * waiters counted against it, `backlog_used`); a rule bucket's `backlog_limit`.
 */
const REDSTATE_COLUMNS: Record<string, string> = {
  sys_scheduler: 'head_priority:u32 num_inbox_by_priority:utf8 backlog_limit:u32 backlog_used:u64',
  sys_user_limits: 'backlog_limit:u32',
};

// DataFusion's information_schema views (the CLI counts `information_schema.columns`, §4).
const INFORMATION_SCHEMA_SPECS: Record<string, string> = {
  tables: 'table_catalog:utf8! table_schema:utf8! table_name:utf8! table_type:utf8!',
  columns:
    'table_catalog:utf8! table_schema:utf8! table_name:utf8! column_name:utf8! ordinal_position:u64! column_default:utf8 ' +
    'is_nullable:utf8! data_type:utf8! character_maximum_length:u64 character_octet_length:u64 numeric_precision:u64 ' +
    'numeric_precision_radix:u64 numeric_scale:u64 datetime_precision:u64 interval_type:utf8',
  schemata:
    'catalog_name:utf8! schema_name:utf8! schema_owner:utf8 default_character_set_catalog:utf8 ' +
    'default_character_set_schema:utf8 default_character_set_name:utf8 sql_path:utf8',
  views: 'table_catalog:utf8! table_schema:utf8! table_name:utf8! definition:utf8',
};

const define = (schema: TableDef['schema'], specs: Record<string, string>): TableDef[] =>
  Object.entries(specs).map(([name, spec]) => ({
    name,
    schema,
    columns: columns(REDSTATE_COLUMNS[name] ? `${spec} ${REDSTATE_COLUMNS[name]}` : spec),
  }));

/** The data tables, by name (`SHOW TABLES` order: alphabetical). */
export const PUBLIC_TABLES: ReadonlyMap<string, TableDef> = new Map(
  define('public', { ...PUBLIC_SPECS, ...REDSTATE_SPECS })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((t) => [t.name, t]),
);

export const INFORMATION_SCHEMA_TABLES: ReadonlyMap<string, TableDef> = new Map(
  define('information_schema', INFORMATION_SCHEMA_SPECS).map((t) => [t.name, t]),
);

/** The fixed rows of the information_schema views, describing every table above. */
export function informationSchemaRows(): Record<string, Array<Record<string, unknown>>> {
  const all = [...PUBLIC_TABLES.values(), ...INFORMATION_SCHEMA_TABLES.values()];
  return {
    tables: all.map((t) => ({
      table_catalog: CATALOG,
      table_schema: t.schema,
      table_name: t.name,
      table_type: t.schema === 'public' ? 'BASE TABLE' : 'VIEW',
    })),
    columns: [...PUBLIC_TABLES.values()].flatMap((t) =>
      t.columns.map((c, i) => ({
        table_catalog: CATALOG,
        table_schema: t.schema,
        table_name: t.name,
        column_name: c.name,
        ordinal_position: BigInt(i + 1),
        is_nullable: c.nullable ? 'YES' : 'NO',
        data_type: ARROW_TYPE_NAME[c.type],
      })),
    ),
    schemata: ['public', 'information_schema'].map((schema_name) => ({ catalog_name: CATALOG, schema_name })),
    views: [],
  };
}
