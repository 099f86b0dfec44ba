import type { Knex } from './database.ts';

/**
 * A store of tables in one service's schema: `table(name)` starts a query on one of them, inside
 * `trx` when the caller writes in a transaction of its own.
 */
export abstract class SchemaStore {
  protected readonly knex: Knex;
  protected readonly schema: string;

  constructor(knex: Knex, schema: string) {
    this.knex = knex;
    this.schema = schema;
  }

  protected table(name: string, trx?: Knex.Transaction): Knex.QueryBuilder {
    return (trx ?? this.knex).withSchema(this.schema).table(name);
  }
}
