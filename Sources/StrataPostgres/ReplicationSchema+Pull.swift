/// What pulling needs in PostgreSQL (decision 63): a change table that triggers on every
/// replicated table fill, a notification that wakes a following replicator, the state of the
/// pull in progress, and a key sequence per entity for rows a server application inserts.
extension ReplicationSchema {
    /// The change table: one row per row inserted, updated or deleted and per link made or
    /// broken by anyone but the replicator itself. `claim` marks rows a pull has taken.
    static let changeTable = "strata_changes"
    /// A pull's progress: the claim it took and the store's history token before it applied
    /// it (where to look for the transaction it committed, after a crash).
    static let pullTable = "strata_pull"
    /// The channel of `NOTIFY` after each change.
    static let channel = "strata_changes"
    /// The session setting that marks the replicator's own writes, which the triggers skip.
    static let originSetting = "strata.origin"
    /// Keys a server application's inserts take by default: above any key the store hands out,
    /// so they are recognisably temporary until the pull gives each row its store key.
    static let serverKeyBase: Int64 = 1 << 62

    /// The trigger function's name.
    static let triggerFunction = "strata_record_change"
    /// The function of the statement triggers that refuse a server's `TRUNCATE`.
    static let truncateFunction = "strata_refuse_truncate"
    /// The function of the triggers that refuse a server's writes while no store pulls.
    static let refuseFunction = "strata_refuse_write"
    /// The name of those triggers.
    static let refuseTrigger = "strata_refuse"

    /// A query of one row: how many triggers of the replicator the tables have (four each), how
    /// many entity tables take their keys from a sequence, whether the change and pull tables
    /// exist, the schema, and how many foreign keys of the tables do not cascade key updates —
    /// given the tables as `$1` and the entity tables as `$2`.
    static let installedPullSQL = """
        SELECT (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                 WHERE t.tgname IN ('strata_changes_insert', 'strata_changes_update', 'strata_changes_delete',
                                    'strata_truncate')
                   AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])),
               (SELECT count(*) FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = ANY($2::text[]) AND column_name = 'pk'
                   AND column_default LIKE 'nextval%'),
               to_regclass(\(SQL.literal(SQL.name(changeTable)))) IS NOT NULL
                   AND to_regclass(\(SQL.literal(SQL.name(pullTable)))) IS NOT NULL,
               current_schema()::text,
               (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
                 WHERE k.contype = 'f' AND k.confupdtype <> 'c'
                   AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[]))
        """

    /// Every foreign key of the tables `$1`: table, constraint and definition (as
    /// `ALTER TABLE … ADD CONSTRAINT name` takes it).
    static let foreignKeysSQL = """
        SELECT c.relname::text, k.conname::text, pg_get_constraintdef(k.oid)
          FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
         WHERE k.contype = 'f' AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])
         ORDER BY c.relname, k.conname
        """

    /// The foreign keys of the tables `$1` that do not cascade key updates: table, constraint,
    /// column, referenced table and `ON DELETE` rule (`pg_constraint.confdeltype`).
    static let foreignKeysWithoutCascadeSQL = """
        SELECT c.relname::text, k.conname::text, a.attname::text, r.relname::text, k.confdeltype::text
          FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
          JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
         WHERE k.contype = 'f' AND k.confupdtype <> 'c' AND cardinality(k.conkey) = 1
           AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])
        """

    /// What every trigger function of the replicator declares: its owner's rights and a search
    /// path of its own.
    static let functionHeader = "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $body$"
    /// True in a replicator's session (marked with its store's range number, or `strata`).
    static let replicatorSession = "coalesce(current_setting(\(SQL.literal(originSetting)), true), '') <> ''"

    /// The trigger functions, for tables in `schema` (replaced each time: that takes no lock a
    /// server application waits for).
    ///
    /// Statement triggers over transition tables (decision 110: one `INSERT … SELECT` per
    /// statement, where a row trigger cost a query per row). Rows: insert, delete, update with
    /// the columns whose values changed (a key change is a delete and an insert). Join tables:
    /// link and unlink. Each change is written once per store of the dataset that did not
    /// write it (a queue per store, `replica`): a store's replicator marks its session with its
    /// range number (the origin setting), a server application's session carries none, so
    /// every store gets its writes. A session marked `strata` (a replicator from before the
    /// register) is skipped. The functions run with their owner's rights (the server
    /// application needs none on the change table) and a search path of their own (whatever
    /// the writing session's, the changes go to the replicator's table); `TRUNCATE` fires no
    /// row trigger, so a server's is refused.
    func pullFunctionsSQL(in schema: String) -> [String] {
        let changes = SQL.name(schema) + "." + SQL.name(Self.changeTable)
        let replicas = SQL.name(schema) + "." + SQL.name(Self.replicasTable)
        let header = Self.functionHeader
        let origin = Self.replicatorSession
        // The stores that get a change: every store in the register but the writer.
        let consumers = "(SELECT r.number FROM \(replicas) r WHERE r.retired IS NULL "
            + "AND r.number::text IS DISTINCT FROM nullif(current_setting(\(SQL.literal(Self.originSetting)), true), ''))"
        // The writing store's number, NULL for a server application.
        let writer = "nullif(current_setting(\(SQL.literal(Self.originSetting)), true), '')::bigint"
        let record = """
        CREATE OR REPLACE FUNCTION \(SQL.name(schema)).\(SQL.name(Self.triggerFunction))() RETURNS trigger \(header)
        DECLARE
            recorded bigint := 0;
            added bigint;
            rekeyed boolean;
        BEGIN
            IF current_setting(\(SQL.literal(Self.originSetting)), true) = 'strata' THEN
                RETURN NULL;
            END IF;
            -- With several stores, the keys below 2^62 are the stores' ranges and no row is
            -- re-keyed: a server application's row takes its key from the sequence (from 2^62)
            -- and keeps it.
            IF \(writer) IS NULL AND TG_ARGV[0] = 'row' AND TG_OP <> 'DELETE'
               AND (SELECT count(*) FROM \(replicas)) > 1 THEN
                -- One test per event: a statement naming old_rows is planned only where it exists.
                IF TG_OP = 'INSERT' THEN
                    rekeyed := EXISTS (SELECT 1 FROM new_rows n WHERE n.pk < \(Self.serverKeyBase));
                ELSE
                    rekeyed := EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.pk = n.pk));
                END IF;
                IF rekeyed THEN
                    RAISE EXCEPTION 'rows of % take their keys from its key sequence and keep them while several Strata stores share the dataset (keys below % are the stores'')', TG_TABLE_NAME, \(Self.serverKeyBase)
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
            END IF;
            IF TG_ARGV[0] = 'join' THEN
                IF TG_OP <> 'INSERT' THEN
                    INSERT INTO \(changes) (replica, origin, tbl, pk, other, op)
                        SELECT c.number, \(writer), TG_TABLE_NAME, o.source, o.target, 'unlink' FROM old_rows o CROSS JOIN \(consumers) c;
                    GET DIAGNOSTICS added = ROW_COUNT;
                    recorded := recorded + added;
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    INSERT INTO \(changes) (replica, origin, tbl, pk, other, op)
                        SELECT c.number, \(writer), TG_TABLE_NAME, n.source, n.target, 'link' FROM new_rows n CROSS JOIN \(consumers) c;
                    GET DIAGNOSTICS added = ROW_COUNT;
                    recorded := recorded + added;
                END IF;
            ELSIF TG_OP = 'INSERT' THEN
                INSERT INTO \(changes) (replica, origin, tbl, pk, op)
                    SELECT c.number, \(writer), TG_TABLE_NAME, n.pk, 'insert' FROM new_rows n CROSS JOIN \(consumers) c;
                GET DIAGNOSTICS added = ROW_COUNT;
                recorded := recorded + added;
            ELSIF TG_OP = 'DELETE' THEN
                INSERT INTO \(changes) (replica, origin, tbl, pk, op)
                    SELECT c.number, \(writer), TG_TABLE_NAME, o.pk, 'delete' FROM old_rows o CROSS JOIN \(consumers) c;
                GET DIAGNOSTICS added = ROW_COUNT;
                recorded := recorded + added;
            ELSE
                -- Keys that changed: the old key deleted, the new one inserted.
                INSERT INTO \(changes) (replica, origin, tbl, pk, op)
                    SELECT c.number, \(writer), TG_TABLE_NAME, o.pk, 'delete' FROM old_rows o CROSS JOIN \(consumers) c
                     WHERE NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.pk = o.pk);
                GET DIAGNOSTICS added = ROW_COUNT;
                recorded := recorded + added;
                INSERT INTO \(changes) (replica, origin, tbl, pk, op)
                    SELECT c.number, \(writer), TG_TABLE_NAME, n.pk, 'insert' FROM new_rows n CROSS JOIN \(consumers) c
                     WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.pk = n.pk);
                GET DIAGNOSTICS added = ROW_COUNT;
                recorded := recorded + added;
                INSERT INTO \(changes) (replica, origin, tbl, pk, op, cols)
                    SELECT c.number, \(writer), TG_TABLE_NAME, d.pk, 'update', d.changed
                      FROM (SELECT n.pk, array_agg(e.key) AS changed
                              FROM new_rows n JOIN old_rows o ON o.pk = n.pk, jsonb_each(to_jsonb(n)) AS e
                             WHERE e.value IS DISTINCT FROM (to_jsonb(o) -> e.key)
                             GROUP BY n.pk) AS d
                      CROSS JOIN \(consumers) c;
                GET DIAGNOSTICS added = ROW_COUNT;
                recorded := recorded + added;
            END IF;
            IF recorded > 0 THEN
                PERFORM pg_notify(\(SQL.literal(Self.channel)), '');
            END IF;
            RETURN NULL;
        END
        $body$
        """
        let refuse = """
        CREATE OR REPLACE FUNCTION \(SQL.name(schema)).\(SQL.name(Self.truncateFunction))() RETURNS trigger \(header)
        BEGIN
            IF \(origin) THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION 'TRUNCATE of % is not replicated to the Strata store: delete the rows instead', TG_TABLE_NAME
                USING ERRCODE = 'feature_not_supported';
        END
        $body$
        """
        return [record, refuse]
    }

    /// Until a store first pulls, nothing records what a server application writes, and the
    /// stores' pushes would overwrite it unseen: every replicated table refuses a server's
    /// writing statements (the replicator's own, marked by the origin setting, and what they
    /// cascade to go through) with an error that says why, and so does `TRUNCATE`. ``pullSQL`` drops these
    /// triggers when it installs the recording ones. A query of one row first: how many of the
    /// tables `$1` carry a recording trigger, and how many a refusing one (installed once, and
    /// never once a store pulls).
    static let installedRefusalSQL = """
        SELECT count(*) FILTER (WHERE t.tgname <> 'strata_refuse'), count(*) FILTER (WHERE t.tgname = 'strata_refuse')
          FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         WHERE t.tgname IN ('strata_changes', 'strata_changes_insert', 'strata_refuse')
           AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])
        """

    /// The refusing function (see ``installedRefusalSQL``), for tables in `schema`.
    func refusalFunctionsSQL(in schema: String) -> [String] {
        let header = Self.functionHeader
        let origin = Self.replicatorSession
        let refuse = """
        CREATE OR REPLACE FUNCTION \(SQL.name(schema)).\(SQL.name(Self.refuseFunction))() RETURNS trigger \(header)
        BEGIN
            IF \(origin) THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION 'writes to % are refused until a Strata store pulls from this database (strata replicate --pull): no store would see them, and its pushes would overwrite them', TG_TABLE_NAME
                USING ERRCODE = 'feature_not_supported';
        END
        $body$
        """
        return pullFunctionsSQL(in: schema).filter { $0.contains(Self.truncateFunction) } + [refuse]
    }

    /// The refusing triggers on every replicated table, and the `TRUNCATE` refusal.
    var refusalSQL: [String] {
        var statements: [String] = []
        for name in tables.map(\.entity) + joinTables.map(\.name) {
            // Per statement: a replicator's pushes pay one check per statement, not per row.
            statements.append("CREATE OR REPLACE TRIGGER \(Self.refuseTrigger) BEFORE INSERT OR UPDATE OR DELETE ON "
                + "\(SQL.name(name)) FOR EACH STATEMENT EXECUTE FUNCTION \(SQL.name(Self.refuseFunction))()")
            statements.append("CREATE OR REPLACE TRIGGER strata_truncate BEFORE TRUNCATE ON \(SQL.name(name)) "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(SQL.name(Self.truncateFunction))()")
        }
        return statements
    }

    /// The change table, the pull table, the triggers on every table and the key sequences,
    /// after ``pullFunctionsSQL(in:)`` (all idempotent; the triggers and key defaults lock their
    /// tables, so they run only when missing).
    var pullSQL: [String] {
        let changes = SQL.name(Self.changeTable)
        var statements = [
            "CREATE TABLE IF NOT EXISTS \(changes) (seq bigserial PRIMARY KEY, tbl text NOT NULL, "
                + "pk bigint NOT NULL, other bigint, op text NOT NULL, cols text[], claim bigint, replica bigint, "
                + "origin bigint)",
            // A change table from before the queues: its changes are the one store's, all a server's.
            "ALTER TABLE \(changes) ADD COLUMN IF NOT EXISTS replica bigint",
            "ALTER TABLE \(changes) ADD COLUMN IF NOT EXISTS origin bigint",
            "CREATE TABLE IF NOT EXISTS \(SQL.name(Self.pullTable)) (name text PRIMARY KEY, claim bigint, after bigint)",
        ]
        for table in tables {
            let sequence = "strata_key_\(table.entity)"
            statements.append("CREATE SEQUENCE IF NOT EXISTS \(SQL.name(sequence)) START WITH \(Self.serverKeyBase)")
            statements.append("ALTER TABLE \(SQL.name(table.entity)) ALTER COLUMN pk SET DEFAULT "
                + "nextval(\(SQL.literal(SQL.name(sequence)))::regclass)")
            statements += Self.triggers(on: table.entity, kind: "row")
        }
        for join in joinTables { statements += Self.triggers(on: join.name, kind: "join") }
        // Server writes are recorded from now on: they need refusing no more.
        for name in tables.map(\.entity) + joinTables.map(\.name) {
            statements.append("DROP TRIGGER IF EXISTS \(Self.refuseTrigger) ON \(SQL.name(name))")
        }
        return statements
    }

    private static func triggers(on table: String, kind: String) -> [String] {
        let function = "\(SQL.name(triggerFunction))(\(SQL.literal(kind)))"
        let name = SQL.name(table)
        return [
            // The row trigger of replicators from before the queues.
            "DROP TRIGGER IF EXISTS strata_changes ON \(name)",
            "CREATE OR REPLACE TRIGGER strata_changes_insert AFTER INSERT ON \(name) REFERENCING NEW TABLE AS new_rows "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)",
            "CREATE OR REPLACE TRIGGER strata_changes_update AFTER UPDATE ON \(name) REFERENCING OLD TABLE AS old_rows "
                + "NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION \(function)",
            "CREATE OR REPLACE TRIGGER strata_changes_delete AFTER DELETE ON \(name) REFERENCING OLD TABLE AS old_rows "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)",
            "CREATE OR REPLACE TRIGGER strata_truncate BEFORE TRUNCATE ON \(name) "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(SQL.name(truncateFunction))()",
        ]
    }
}
