import { describe, expect, it } from 'vitest';
import { delegatedModels, otherModules, structureDifferences } from '../erp-double/capture-replay.ts';

describe('structureDifferences (the live replay compares the real ERP and the double by structure)', () => {
  it('compares listings by the shape of their items, not by their number', () => {
    // Prepare: a database list of a server with more databases than the double has.
    const double = { result: ['erp_a', 'erp_b'] };
    const live = { result: ['erp18_a', 'erp18_b', 'erp_a', 'erp_b'] };

    // Act / Assess
    expect(structureDifferences(double, live)).toEqual([]);
    expect(structureDifferences(live, double)).toEqual([]);
  });

  it('still reports an item of another shape', () => {
    expect(structureDifferences({ result: [[1, 'a']] }, { result: [{ id: 1 }, { id: 2 }] })).toEqual([
      '$.result[0]: list, got dict',
    ]);
    expect(structureDifferences([{ id: 1, name: 'a' }], [{ id: 2 }, { id: 3 }])).toEqual([
      '$[0]: 1 keys missing (name)',
    ]);
  });

  it("takes false, Odoo's empty value, as fitting a field of any type", () => {
    expect(structureDifferences([{ email: 'a@example.com' }], [{ email: false }])).toEqual([]);
    expect(structureDifferences([{ email: false }], [{ email: 'a@example.com' }])).toEqual([]);
    expect(structureDifferences([{ email: 'a@example.com' }], [{ email: 3 }])).toEqual([
      '$[0].email: str, got number',
    ]);
  });

  it('compares exactly for the double against its captures: counts, and false as a boolean', () => {
    const exact = { compare: 'exact' } as const;
    expect(structureDifferences({ result: ['erp_a', 'erp_b'] }, { result: ['erp_a'] }, exact)).toEqual([
      '$.result: 2 items, got 1',
    ]);
    expect(structureDifferences([{ email: 'a@example.com' }], [{ email: false }], exact)).toEqual([
      '$[0].email: str, got bool',
    ]);
  });

  it('takes a dict against false as fitting when comparing shapes (an empty many2one is false)', () => {
    expect(structureDifferences([{ country_id: { id: 1, code: 'BE' } }], [{ country_id: false }])).toEqual(
      [],
    );
  });
});

describe('otherModules (a live server with other modules than the capture server)', () => {
  it('leaves out of a model document what modules the double never names define, and same-named items of another module', () => {
    const double = {
      fields: { name: { module: 'base' }, message_ids: { module: 'mail' } },
      methods: { read: { module: 'base' } },
    };
    const live = {
      fields: { name: { module: 'base' }, message_ids: { module: 'x_more' }, x_note: { module: 'x_more' } },
      methods: { read: { module: 'base' }, message_post: { module: 'x_more' } },
    };
    const compared = otherModules('/doc-bearer/res.partner.json', live, double);
    expect(compared.leftOut).toEqual([
      'fields.message_ids (x_more)',
      'fields.x_note (x_more)',
      'methods.message_post (x_more)',
    ]);
    expect(compared.live).toEqual({
      fields: { name: { module: 'base' } },
      methods: { read: { module: 'base' } },
    });
    expect(compared.double).toEqual({
      fields: { name: { module: 'base' } },
      methods: { read: { module: 'base' } },
    });
  });

  describe('an _inherits field (res.users from res.partner), whose module Odoo names at random', () => {
    // res.users' copy of a partner field names the module of its partner_id (base) or the
    // partner field's own: odoo/orm/fields.py unions them in a set, hashed per process.
    const partnerId = { type: 'many2one', relation: 'res.partner', module: 'base' };
    const inherited = (name: string, module: string, extra: Record<string, unknown> = {}) => ({
      related: `partner_id.${name}`,
      module,
      ...extra,
    });
    const double = {
      fields: {
        partner_id: partnerId,
        email: inherited('email', 'base'),
        message_needaction: inherited('message_needaction', 'base', { help: 'mail' }),
      },
    };
    const live = {
      fields: {
        partner_id: partnerId,
        email: inherited('email', 'base'),
        message_needaction: inherited('message_needaction', 'base'),
        x_more_note: inherited('x_more_note', 'base'),
      },
    };
    const delegates = {
      live: {
        'res.partner': {
          fields: {
            email: { module: 'base' },
            message_needaction: { module: 'x_more' },
            x_more_note: { module: 'x_more' },
          },
        },
      },
      double: {
        'res.partner': { fields: { email: { module: 'base' }, message_needaction: { module: 'mail' } } },
      },
    };

    it('names the models the documents of which tell where such fields come from', () => {
      expect(delegatedModels(live)).toEqual(['res.partner']);
      expect(delegatedModels({ fields: { partner_id: partnerId, name: { module: 'base' } } })).toEqual([]);
      // a related field of another name is not an _inherits field
      expect(
        delegatedModels({ fields: { partner_id: partnerId, x: { related: 'partner_id.email' } } }),
      ).toEqual([]);
    });

    it('places them by the delegated model documents, whatever module they name', () => {
      const compared = otherModules('/doc-bearer/res.users.json', live, double, delegates);
      expect(compared.leftOut).toEqual(['fields.message_needaction (x_more)', 'fields.x_more_note (x_more)']);
      expect(compared.live).toEqual({ fields: { partner_id: partnerId, email: inherited('email', 'base') } });
      expect(compared.double).toEqual({
        fields: { partner_id: partnerId, email: inherited('email', 'base') },
      });
    });

    it('without the delegated documents, goes by the module they name (as before)', () => {
      expect(otherModules('/doc-bearer/res.users.json', live, double).leftOut).toEqual([]);
    });
  });

  it('leaves other answers, and a base field the double lacks, as they are', () => {
    const live = { fields: { name: { module: 'base' }, email: { module: 'base' } } };
    const double = { fields: { name: { module: 'base' } } };
    expect(otherModules('/doc-bearer/res.partner.json', live, double).leftOut).toEqual([]);
    expect(otherModules('/json/2/res.partner/read', live, double)).toEqual({ live, double, leftOut: [] });
  });
});
