/**
 * @module erp-double/database
 * One in-memory Odoo database: a table of rows per model.
 */
import { MODELS, type ModelDef } from './models.ts';

/** A stored record: field name to stored value (many2one as an id or `false`, many2many as ids). */
export type Row = Record<string, unknown>;

interface ModelTable {
  readonly def: ModelDef;
  readonly rows: Map<number, Row>;
  nextId: number;
}

/** One database of the double, with its own data. */
export class Database {
  readonly name: string;
  private readonly tables = new Map<string, ModelTable>();

  constructor(name: string) {
    this.name = name;
    for (const def of MODELS)
      this.tables.set(def.name, { def, rows: new Map(), nextId: def.firstFreeId ?? 1 });
  }

  /** The model definition, or undefined when the model does not exist. */
  model(name: string): ModelDef | undefined {
    return this.tables.get(name)?.def;
  }

  /** Inserts a row with its `id` as given (seeding, {@link reserveId}) or the next free id; returns the id. */
  insert(model: string, row: Row): number {
    const table = this.table(model);
    const id = typeof row.id === 'number' ? row.id : table.nextId;
    table.rows.set(id, { ...row, id });
    table.nextId = Math.max(table.nextId, id + 1);
    return id;
  }

  /**
   * Takes the next id of a model's sequence, as PostgreSQL's `nextval` does when an INSERT starts:
   * the id stays used even when the INSERT then fails a constraint or the transaction rolls back
   * (the bridge captures skip the ids of the failed creates).
   */
  reserveId(model: string): number {
    const table = this.table(model);
    const id = table.nextId;
    table.nextId += 1;
    return id;
  }

  /**
   * Runs `action` as one transaction: when it throws, every table gets its rows back, like Odoo's
   * rollback of the request's cursor. Sequences are not rolled back (PostgreSQL's are not either).
   */
  transaction<T>(action: () => T): T {
    // Rows are flat records whose values are replaced, never mutated in place (arrays included),
    // so a shallow copy of each row is a full snapshot.
    const saved = [...this.tables.values()].map((table) => ({
      table,
      rows: [...table.rows.values()].map((row) => ({ ...row })),
    }));
    try {
      return action();
    } catch (error) {
      for (const { table, rows } of saved) {
        table.rows.clear();
        for (const row of rows) table.rows.set(Number(row.id), row);
      }
      throw error;
    }
  }

  /** The row with that id, or undefined. */
  row(model: string, id: number): Row | undefined {
    return this.tables.get(model)?.rows.get(id);
  }

  /** All rows of a model, by ascending id. */
  rows(model: string): Row[] {
    const table = this.tables.get(model);
    if (!table) return [];
    return [...table.rows.values()].sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** Deletes a row. */
  delete(model: string, id: number): void {
    this.table(model).rows.delete(id);
  }

  /** The value of a field: stored, or computed (one2many, display_name, ...). */
  fieldValue(model: string, row: Row, field: string): unknown {
    const def = this.model(model)?.fields[field];
    if (!def) return undefined;
    if (def.computed) return def.computed(row, this);
    if (def.type === 'one2many' && def.relation && def.inverse) {
      const inverse = def.inverse;
      return this.rows(def.relation)
        .filter((other) => other[inverse] === row.id)
        .map((other) => other.id);
    }
    if (field === 'id') return row.id;
    return row[field];
  }

  /** `display_name` of a record, or `''` when it does not exist. */
  displayName(model: string, id: number): string {
    const row = this.row(model, id);
    if (!row) return '';
    const value = this.fieldValue(model, row, 'display_name');
    return typeof value === 'string' ? value : '';
  }

  private table(model: string): ModelTable {
    const table = this.tables.get(model);
    if (!table) throw new Error(`erp-double: unknown model ${model}`);
    return table;
  }
}
