import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubErrorData } from '../../lambdas/upstream/erp-transport.ts';
import {
  dataWithoutInfrastructure,
  withoutInfrastructure,
} from '../../lambdas/upstream/infrastructure-text.ts';
import { loadCapture } from '../erp-double/capture-replay.ts';

/** The texts of an unknown database as each Odoo's libpq words it (the READMEs of ../shared/odoo16-19). */
const UNKNOWN_DB = {
  // Odoo 17, 18, 19 (libpq 14+): captures o18-v1-err-nonexistent-db.json, v1-nonexistent-db-error.json.
  libpq15:
    'connection to server at "127.0.0.1", port 5432 failed: FATAL:  database "no_such_db" does not exist\n',
  // With a host name, libpq adds the address it resolved to.
  named:
    'connection to server at "db.internal" (10.1.2.3), port 6543 failed: FATAL:  database "no_such_db" does not exist\n',
  socket:
    'connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: FATAL:  database "no_such_db" does not exist\n',
  // Odoo 16 (bullseye's libpq 13): no connection prefix.
  libpq13: 'FATAL:  database "no_such_db" does not exist\n',
};

describe('withoutInfrastructure', () => {
  it.each(Object.entries(UNKNOWN_DB))('an unknown database (%s) names the database only', (_, text) => {
    expect(withoutInfrastructure(text)).toBe('database "no_such_db" does not exist');
  });

  it('a database server that is down loses its address (libpq 14+ and 13)', () => {
    expect(
      withoutInfrastructure(
        'connection to server at "10.0.0.5", port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n',
      ),
    ).toBe('Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n');
    expect(
      withoutInfrastructure(
        'could not connect to server: Connection refused\n\tIs the server running on host "pg.internal" (10.0.0.5) and accepting\n\tTCP/IP connections on port 5432?\n',
      ),
    ).toBe("could not connect to server: Connection refused\n\tIs the ERP's database server running?\n");
  });

  it('leaves every other ERP text as the ERP wrote it (the same string)', () => {
    for (const text of [
      'Access Denied',
      "Object x.nope doesn't exist",
      'FATAL:  password authentication failed for user "odoo"',
      'Invalid field res.partner.nope in leaf ("nope", "=", 1)',
      '',
    ])
      expect(withoutInfrastructure(text)).toBe(text);
  });

  it('never leaves a host, port or socket of the connection prefix (property)', () => {
    const token = fc.stringMatching(/^[a-z0-9.:-]{1,30}$/);
    fc.assert(
      fc.property(
        token,
        fc.integer({ min: 1, max: 65535 }),
        fc.string({ maxLength: 40 }),
        (host, port, db) => {
          const name = db.replace(/["\n]/g, '');
          const text = `connection to server at "${host}", port ${port} failed: FATAL:  database "${name}" does not exist\n`;
          expect(withoutInfrastructure(text)).toBe(`database "${name}" does not exist`);
        },
      ),
    );
  });
});

describe('dataWithoutInfrastructure', () => {
  it('rewrites message, arguments and the traceback of the real Odoo 18 capture, keeping the rest', () => {
    const capture = loadCapture('o18-v1-err-nonexistent-db.json');
    const data = (capture.response.body as { error: { data: Record<string, unknown> } }).error.data;
    const clean = dataWithoutInfrastructure(data);
    expect(clean.name).toBe('psycopg2.OperationalError');
    expect(clean.message).toBe('database "no_such_db" does not exist');
    expect(clean.arguments).toEqual(['database "no_such_db" does not exist']);
    expect(clean.context).toEqual(data.context);
    expect(JSON.stringify(clean)).not.toMatch(/127\.0\.0\.1|5432|connection to server/);
    expect(String(clean.debug)).toMatch(/psycopg2\.OperationalError: database "no_such_db" does not exist/);
    // The ERP's object is not changed in place.
    expect(String(data.message)).toMatch(/^connection to server/);
  });

  it('returns the very same object when nothing names the infrastructure', () => {
    const data = {
      name: 'odoo.exceptions.AccessDenied',
      message: 'Access Denied',
      arguments: ['Access Denied'],
    };
    expect(dataWithoutInfrastructure(data)).toBe(data);
  });

  it('scrubErrorData applies it with and without ERP_STRIP_DEBUG', () => {
    const data = {
      name: 'psycopg2.OperationalError',
      message: UNKNOWN_DB.libpq15,
      arguments: [UNKNOWN_DB.libpq15],
      debug: `Traceback ...\npsycopg2.OperationalError: ${UNKNOWN_DB.libpq15}`,
    };
    expect(scrubErrorData(data, false)).toEqual({
      name: 'psycopg2.OperationalError',
      message: 'database "no_such_db" does not exist',
      arguments: ['database "no_such_db" does not exist'],
      debug: 'Traceback ...\npsycopg2.OperationalError: database "no_such_db" does not exist',
    });
    expect(scrubErrorData(data, true)).toEqual({
      name: 'psycopg2.OperationalError',
      message: 'database "no_such_db" does not exist',
      arguments: ['database "no_such_db" does not exist'],
    });
  });
});
