import Foundation
import StrataStorage

extension RecordStore {
    /// Brings the store to the model it is opened with: records the model in a new store,
    /// refuses a newer version, migrates an older model as `migration` says, upgrades old index
    /// keys.
    func checkModel(readOnly: Bool, migration: MigrationPolicy) throws {
        let lines = model.schemaLines
        let (stored, storedVersion) = try storage.read { tx -> ([UInt8]?, Int?) in
            let meta = try tx.tree(RecordTrees.meta)
            return (try meta?.get(RecordTrees.schemaKey),
                    try RecordTrees.storedModelVersion(try meta?.get(RecordTrees.modelVersionKey)))
        }
        guard let stored else { return try recordModel(readOnly: readOnly) }
        let old = String(decoding: stored, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        if let storedVersion, storedVersion > model.version {
            throw StrataError.unsupportedModelVersion(found: storedVersion, supported: model.version)
        }
        if case .plan(let plan) = migration {
            return try migrate(through: plan, storedLines: old, storedVersion: storedVersion, readOnly: readOnly)
        }
        if old == lines { return try openCurrent(storedVersion: storedVersion, readOnly: readOnly) }
        guard case .lightweight = migration, !readOnly else {
            throw StrataError.modelMismatch(differences: ModelDifferences.between(stored: old, given: lines))
        }
        try KeyFormat.refuseNewer(storage)
        let oldModel = try StoredModel.parse(old, version: storedVersion ?? 1)
        try storage.write { tx in
            try Migration(old: oldModel, new: model).run(in: tx)
            try KeyFormat.mark(tx)  // the migration rebuilt every key
        }
    }

    /// A new store: the model, its version and the key format.
    private func recordModel(readOnly: Bool) throws {
        if readOnly { throw StrataError.readOnly(reason: "the store has no model yet and is opened read-only") }
        try storage.write { tx in
            // Record trees without a stored model are damage (the meta tree was lost): writing a
            // fresh model over them would restart the key counters and overwrite rows.
            if let orphan = try tx.treeNames.first(where: RecordTrees.isRecordTreeName) {
                throw StrataError.corrupt("the store holds record tree '\(orphan)' but no stored model", offset: nil)
            }
            let meta = try tx.treeCreatingIfMissing(RecordTrees.meta)
            try meta.put(RecordTrees.schemaKey, Array(model.schemaLines.joined(separator: "\n").utf8))
            try RecordTrees.putModelVersion(model.version, in: meta)
            try KeyFormat.mark(tx)
        }
    }

    /// The store holds the model opened: old index keys upgraded, the version recorded where it
    /// differs (an absent entry is version 1).
    private func openCurrent(storedVersion: Int?, readOnly: Bool) throws {
        try KeyFormat.upgrade(storage, model: model, readOnly: readOnly)
        guard (storedVersion ?? 1) != model.version, !readOnly else { return }
        try storage.write { tx in
            try RecordTrees.putModelVersion(model.version, in: try tx.treeCreatingIfMissing(RecordTrees.meta))
        }
    }

    /// Runs the plan's stages from the store's version to the model's, in one transaction.
    private func migrate(through plan: MigrationPlan, storedLines old: [String], storedVersion: Int?,
                         readOnly: Bool) throws {
        let lines = model.schemaLines
        guard plan.destination.version == model.version, plan.destination.schemaLines == lines else {
            throw StrataError.invalidArgument(
                "the migration plan ends at version \(plan.destination.version), not at the model the store is "
                + "opened with (version \(model.version)\(plan.destination.schemaLines == lines ? "" : ", another model"))")
        }
        // A store written before versions is at the earliest version whose model it holds.
        guard let version = storedVersion ?? plan.earliestVersion(holding: old) else {
            throw StrataError.modelMismatch(differences: ["the store holds none of the migration plan's versions"]
                + ModelDifferences.between(stored: old, given: plan.stages[0].source.schemaLines))
        }
        if version == model.version {
            guard old == lines else {
                throw StrataError.modelMismatch(differences: [
                    "the store holds version \(version) of the model, but not the plan's version \(version) "
                    + "(a changed model needs a new version and a stage)"]
                    + ModelDifferences.between(stored: old, given: lines))
            }
            return try openCurrent(storedVersion: storedVersion, readOnly: readOnly)
        }
        guard let first = plan.stageIndex(from: version) else {
            throw StrataError.invalidArgument("the migration plan has no stage from version \(version), "
                                              + "the version the store holds")
        }
        let source = plan.stages[first].source
        guard source.schemaLines == old else {
            throw StrataError.modelMismatch(differences: [
                "the store holds version \(version) of the model, but not the plan's version \(version)"]
                + ModelDifferences.between(stored: old, given: source.schemaLines))
        }
        guard !readOnly else {
            throw StrataError.readOnly(reason: "the store holds version \(version) of the model and needs migrating "
                                       + "to version \(model.version); open it read-write")
        }
        try KeyFormat.refuseNewer(storage)
        let stages = plan.stages[first...]
        try storage.write { tx in
            for (i, stage) in stages.enumerated() {
                var migration = Migration(old: stage.source, new: stage.destination, migrate: stage.migrate)
                migration.progress = MigrationProgressReporter(
                    observer: plan.progress, stage: i, stageCount: stages.count,
                    fromVersion: stage.source.version, toVersion: stage.destination.version)
                try migration.run(in: tx)
            }
            try KeyFormat.mark(tx)  // the migration rebuilt every key
        }
    }
}

/// The lines of two schema texts that differ, for `StrataError.modelMismatch`.
enum ModelDifferences {
    static func between(stored: [String], given: [String]) -> [String] {
        let old = Set(stored), new = Set(given)
        var out: [String] = []
        for line in stored where !new.contains(line) {
            out.append("stored, not in the given model: \(line.trimmingCharacters(in: .whitespaces))")
        }
        for line in given where !old.contains(line) {
            out.append("in the given model, not stored: \(line.trimmingCharacters(in: .whitespaces))")
        }
        if out.isEmpty { out.append("the same properties in another order") }
        return out
    }
}
