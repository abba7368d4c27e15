import StrataRecords

/// The PostgreSQL tables a store's model becomes: a table per entity (named as the entity),
/// its primary key `pk`, a column per attribute, derived ones included, and per to-one
/// relationship a column holding the target's key, a foreign key to its table (deferred to the
/// commit, so rows of one transaction can come in any order; `ON DELETE SET NULL`, Strata's
/// nullify); a join table per many-to-many relationship (`source`, `target`), named after the
/// side whose `Entity.relationship` sorts first. Every column but `pk` may be null: Strata
/// checks the values, and a row inserted later than a change to it is only ever partial for
/// the length of one transaction.
struct ReplicationSchema {
    struct Column {
        var name: String
        var sqlType: String
        /// The target entity of a to-one relationship column.
        var target: String?
        /// A derived attribute's column: the store computes it, a server's write to it is replaced.
        var isDerived = false
    }

    struct Table {
        var entity: String
        var columns: [Column]
        var columnByName: [String: Int]

        /// The columns a pull reads and writes: attributes and to-ones, not the key or derived ones.
        var pulledColumns: [Column] { columns.filter { $0.name != "pk" && !$0.isDerived } }
    }

    struct JoinTable {
        var name: String
        var entity: String
        var relationship: String
        var target: String
    }

    /// The table holding the replication's own state: a row per replication name, with the
    /// token of the last Strata transaction applied and the model it was applied with.
    static let stateTable = "strata_replication"

    /// The dataset's register of stores: each replication name with the number of the range of
    /// primary keys its store allocates from (decision 110), when it joined, when it left, and
    /// the id of its store file (a copy or another store under its name is refused).
    static let replicasTable = "strata_replicas"

    let tables: [Table]
    let tableByEntity: [String: Int]
    let joinTables: [JoinTable]
    /// Join tables by name.
    let joinTableByName: [String: Int]
    /// By `Entity.relationship`, the join table of a many-to-many relationship and whether that
    /// side is the table's `source`.
    let joinBySide: [String: (table: Int, isSource: Bool)]

    init(model: Model) {
        var tables: [Table] = []
        var joins: [JoinTable] = []
        var joinBySide: [String: (table: Int, isSource: Bool)] = [:]
        for entity in model.entities {
            var columns = [Column(name: "pk", sqlType: "bigint", target: nil)]
            for attribute in entity.attributes where !attribute.isTransient {
                columns.append(Column(name: attribute.name, sqlType: Self.sqlType(attribute.type), target: nil))
            }
            for derived in entity.derivedAttributes {
                columns.append(Column(name: derived.name, sqlType: Self.sqlType(derived.type), target: nil, isDerived: true))
            }
            for relationship in entity.relationships {
                if relationship.isManyToMany {
                    let side = "\(entity.name).\(relationship.name)"
                    let other = "\(relationship.target).\(relationship.inverse)"
                    guard side <= other else { continue }
                    joins.append(JoinTable(name: "\(entity.name)_\(relationship.name)", entity: entity.name,
                                           relationship: relationship.name, target: relationship.target))
                    joinBySide[side] = (joins.count - 1, true)
                    joinBySide[other] = (joins.count - 1, false)
                } else if !relationship.isToMany {
                    columns.append(Column(name: relationship.name, sqlType: "bigint", target: relationship.target))
                }
            }
            var byName: [String: Int] = [:]
            for (index, column) in columns.enumerated() { byName[column.name] = index }
            tables.append(Table(entity: entity.name, columns: columns, columnByName: byName))
        }
        self.tables = tables
        var byEntity: [String: Int] = [:]
        for (index, table) in tables.enumerated() { byEntity[table.entity] = index }
        self.tableByEntity = byEntity
        self.joinTables = joins
        var joinByName: [String: Int] = [:]
        for (index, join) in joins.enumerated() { joinByName[join.name] = index }
        self.joinTableByName = joinByName
        self.joinBySide = joinBySide
    }

    static func sqlType(_ type: AttributeType) -> String {
        switch type {
        case .bool: return "boolean"
        case .int16: return "smallint"
        case .int32: return "integer"
        case .int64: return "bigint"
        case .double: return "double precision"
        case .decimal: return "numeric"
        case .string: return "text"
        case .date: return "timestamp with time zone"
        case .uuid: return "uuid"
        case .binary: return "bytea"
        }
    }

    /// `CREATE TABLE IF NOT EXISTS` for the state table, every entity's and every join table
    /// (the to-one foreign keys are added apart, ``foreignKeySQL``, once every table exists).
    var creationSQL: [String] {
        var statements = ["CREATE TABLE IF NOT EXISTS \(SQL.name(Self.stateTable)) (name text PRIMARY KEY, "
            + "token bigint NOT NULL, model text NOT NULL)",
            "CREATE TABLE IF NOT EXISTS \(SQL.name(Self.replicasTable)) (number bigint PRIMARY KEY, name text NOT NULL "
            + "UNIQUE, joined timestamp with time zone NOT NULL DEFAULT now(), retired timestamp with time zone, "
            + "store_file bigint)"]
        for table in tables {
            let columns = table.columns.map { column in
                "\(SQL.name(column.name)) \(column.sqlType)" + (column.name == "pk" ? " PRIMARY KEY" : "")
            }
            statements.append("CREATE TABLE IF NOT EXISTS \(SQL.name(table.entity)) (\(columns.joined(separator: ", ")))")
        }
        for join in joinTables {
            statements.append("CREATE TABLE IF NOT EXISTS \(SQL.name(join.name)) (source bigint NOT NULL "
                + "REFERENCES \(SQL.name(join.entity)) (pk) ON DELETE CASCADE ON UPDATE CASCADE "
                + "DEFERRABLE INITIALLY DEFERRED, target bigint NOT NULL REFERENCES \(SQL.name(join.target)) (pk) "
                + "ON DELETE CASCADE ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED, PRIMARY KEY (source, target))")
        }
        return statements
    }

    /// The foreign keys of to-one columns, added by name so a second run finds them there.
    var foreignKeySQL: [(constraint: String, table: String, statement: String)] {
        var out: [(String, String, String)] = []
        for table in tables {
            for column in table.columns {
                guard let target = column.target else { continue }
                let constraint = "strata_fk_\(table.entity)_\(column.name)"
                out.append((constraint, table.entity,
                            "ALTER TABLE \(SQL.name(table.entity)) ADD CONSTRAINT \(SQL.name(constraint)) "
                                + "FOREIGN KEY (\(SQL.name(column.name))) REFERENCES \(SQL.name(target)) (pk) "
                                + "ON DELETE SET NULL ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED"))
            }
        }
        return out
    }

    /// Every table's expected columns and types as `information_schema` names the types.
    var expectedShapes: [(table: String, columns: [(name: String, type: String)])] {
        var shapes = tables.map { table in
            (table.entity, table.columns.map { ($0.name, $0.sqlType) })
        }
        for join in joinTables { shapes.append((join.name, [("source", "bigint"), ("target", "bigint")])) }
        return shapes
    }
}

/// SQL spelling helpers.
enum SQL {
    /// A string literal (standard-conforming: only the quote is doubled).
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// A quoted identifier: names keep their case and may be any string.
    static func name(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
