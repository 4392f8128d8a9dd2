/**
 * @module erp-double/models
 * Model and field definitions of the imitated Odoo, and the seed data of each database.
 */
import { createHash } from 'node:crypto';
import type { Database, Row } from './database.ts';
import { validationError } from './errors.ts';
import type { ErpUser } from './types.ts';

/** Odoo field types the double knows. */
export type FieldType =
  | 'integer'
  | 'float'
  | 'char'
  | 'text'
  | 'html'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'selection'
  | 'many2one'
  | 'one2many'
  | 'many2many'
  | 'binary';

/** One field of a model. */
export interface FieldDef {
  type: FieldType;
  string: string;
  relation?: string;
  /** one2many: the many2one field on the comodel pointing back. */
  inverse?: string;
  selection?: readonly (readonly [string, string])[];
  required?: boolean;
  readonly?: boolean;
  /** Not stored (computed); defaults to stored. */
  computed?: (row: Row, db: Database) => unknown;
  /** The related path `fields_get` shows (`partner_id.email`: res.users' email is its partner's). */
  related?: string;
}

/** Who may do an operation: anybody authenticated, admins only, or nobody (no ACL grants it). */
export type AccessLevel = 'user' | 'admin' | 'none';

/** The usual access rights of the imitated models: any user reads, only an admin changes. */
const USERS_READ_ADMINS_WRITE: ModelDef['access'] = Object.freeze({
  read: 'user',
  write: 'admin',
  create: 'admin',
  unlink: 'admin',
});

/** One model of the imitated Odoo. */
export interface ModelDef {
  name: string;
  /** `_description`, used in access error messages. */
  description: string;
  fields: Readonly<Record<string, FieldDef>>;
  /** `_order`. */
  order: string;
  access: Readonly<Record<'read' | 'write' | 'create' | 'unlink', AccessLevel>>;
  /** Group named in the AccessError for admin-only operations. */
  adminGroup: string;
  /**
   * The same group as 16-18 name it, when it differs: before 19's privileges, `full_name` is
   * `<category>/<name>` (captures o18-, o17- and o16-v1-err-limited-create).
   */
  adminGroupBefore19?: string;
  /** `_module` of the model: the module its stored fields come from (`/doc-bearer` documents). Default `base`. */
  module?: string;
  /** First id handed out by `create` after the seed. */
  firstFreeId?: number;
  /** Values set on create when absent. */
  defaults?: (db: Database) => Row;
  /** Raises a ValidationError when the values are not acceptable. */
  validateCreate?: (values: Row, db: Database) => void;
  /** `copy_data` overrides of the model: values `copy()` sets when `default` does not name them. */
  copyDefaults?: (row: Row) => Row;
}

const ID: FieldDef = { type: 'integer', string: 'ID', readonly: true };
const CREATE_DATE: FieldDef = { type: 'datetime', string: 'Created on', readonly: true };
const WRITE_DATE: FieldDef = { type: 'datetime', string: 'Last Updated on', readonly: true };

function displayNameField(compute: (row: Row, db: Database) => string): FieldDef {
  return { type: 'char', string: 'Display Name', readonly: true, computed: compute };
}

function nameOf(row: Row): string {
  return typeof row.name === 'string' ? row.name : '';
}

/** `res.partner.display_name`: "Parent, Name" for a contact of a company. */
export function partnerDisplayName(row: Row, db: Database): string {
  const parentId = row.parent_id;
  if (typeof parentId === 'number') {
    const parent = db.row('res.partner', parentId);
    if (parent) return `${nameOf(parent)}, ${nameOf(row)}`;
  }
  return nameOf(row);
}

const PARTNER: ModelDef = {
  name: 'res.partner',
  description: 'Contact',
  order: 'complete_name asc, id desc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Contact/Creation',
  adminGroupBefore19: 'Extra Rights/Contact Creation',
  firstFreeId: 43,
  fields: {
    id: ID,
    display_name: displayNameField(partnerDisplayName),
    complete_name: { type: 'char', string: 'Complete Name', readonly: true, computed: partnerDisplayName },
    name: { type: 'char', string: 'Name' },
    email: { type: 'char', string: 'Email' },
    phone: { type: 'char', string: 'Phone' },
    is_company: { type: 'boolean', string: 'Is a Company' },
    company_type: {
      type: 'selection',
      string: 'Company Type',
      selection: [
        ['person', 'Person'],
        ['company', 'Company'],
      ],
      computed: (row) => (row.is_company === true ? 'company' : 'person'),
    },
    type: {
      type: 'selection',
      string: 'Address Type',
      selection: [
        ['contact', 'Contact'],
        ['invoice', 'Invoice'],
        ['delivery', 'Delivery'],
        ['other', 'Other'],
      ],
    },
    parent_id: { type: 'many2one', string: 'Related Company', relation: 'res.partner' },
    child_ids: { type: 'one2many', string: 'Contact', relation: 'res.partner', inverse: 'parent_id' },
    country_id: { type: 'many2one', string: 'Country', relation: 'res.country' },
    company_id: { type: 'many2one', string: 'Company', relation: 'res.company' },
    category_id: { type: 'many2many', string: 'Tags', relation: 'res.partner.category' },
    comment: { type: 'html', string: 'Notes' },
    lang: { type: 'selection', string: 'Language', selection: [['en_US', 'English (US)']] },
    tz: {
      type: 'selection',
      string: 'Timezone',
      selection: [
        ['Europe/Brussels', 'Europe/Brussels'],
        ['UTC', 'UTC'],
      ],
    },
    active: { type: 'boolean', string: 'Active' },
    image_1920: { type: 'binary', string: 'Image' },
    image_128: { type: 'binary', string: 'Image 128', readonly: true },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
  defaults: () => ({ active: true, is_company: false, type: 'contact' }),
  // res.partner.copy_data: the copy is named "<name> (copy)".
  copyDefaults: (row) => ({ name: `${nameOf(row)} (copy)` }),
  validateCreate: (values) => {
    if (typeof values.name !== 'string' || values.name === '') {
      // A check constraint on the table; retrying() turns the IntegrityError into this (captures).
      throw validationError('The operation cannot be completed: Contacts require a name');
    }
  },
};

const USERS: ModelDef = {
  name: 'res.users',
  description: 'User',
  order: 'name asc, login asc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Role / Administrator',
  firstFreeId: 8,
  fields: {
    id: ID,
    display_name: displayNameField(nameOf),
    name: { type: 'char', string: 'Name', required: true },
    login: { type: 'char', string: 'Login', required: true },
    login_date: { type: 'datetime', string: 'Latest authentication', readonly: true },
    partner_id: { type: 'many2one', string: 'Related Partner', relation: 'res.partner' },
    company_id: { type: 'many2one', string: 'Company', relation: 'res.company' },
    company_ids: { type: 'many2many', string: 'Companies', relation: 'res.company' },
    tz: { type: 'selection', string: 'Timezone', selection: [['Europe/Brussels', 'Europe/Brussels']] },
    signature: { type: 'html', string: 'Email Signature' },
    // Odoo: fields.Char(related='partner_id.email', inherited=True) (res_users.py, 16-19).
    email: { type: 'char', string: 'Email', related: 'partner_id.email' },
    share: { type: 'boolean', string: 'Share User', readonly: true },
    notification_type: {
      type: 'selection',
      string: 'Notification',
      selection: [
        ['email', 'Handle by Emails'],
        ['inbox', 'Handle in Odoo'],
      ],
    },
    active: { type: 'boolean', string: 'Active' },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
  defaults: () => ({
    active: true,
    share: false,
    notification_type: 'email',
    company_id: 1,
    company_ids: [1],
  }),
  // res.users.copy_data: both the name and the login get " (copy)", the login being unique.
  copyDefaults: (row) => ({
    name: `${nameOf(row)} (copy)`,
    login: `${typeof row.login === 'string' ? row.login : ''} (copy)`,
  }),
  validateCreate: (values, db) => {
    if (db.rows('res.users').some((row) => row.login === values.login)) {
      throw validationError(
        'The operation cannot be completed: You can not have two users with the same login!',
      );
    }
  },
};

const CONFIG_PARAMETER: ModelDef = {
  name: 'ir.config_parameter',
  description: 'System Parameter',
  order: 'key asc',
  access: { read: 'admin', write: 'admin', create: 'admin', unlink: 'admin' },
  adminGroup: 'Role / Administrator',
  fields: {
    id: ID,
    display_name: displayNameField((row) => (typeof row.key === 'string' ? row.key : '')),
    key: { type: 'char', string: 'Key', required: true },
    value: { type: 'text', string: 'Value', required: true },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
};

const COUNTRY: ModelDef = {
  name: 'res.country',
  description: 'Country',
  order: 'name asc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Role / Administrator',
  fields: {
    id: ID,
    display_name: displayNameField(nameOf),
    name: { type: 'char', string: 'Country Name', required: true },
    code: { type: 'char', string: 'Country Code' },
  },
};

const COMPANY: ModelDef = {
  name: 'res.company',
  description: 'Companies',
  order: 'sequence asc, name asc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Role / Administrator',
  fields: {
    id: ID,
    display_name: displayNameField(nameOf),
    name: { type: 'char', string: 'Company Name', required: true },
    sequence: { type: 'integer', string: 'Sequence' },
    partner_id: { type: 'many2one', string: 'Partner', relation: 'res.partner' },
    currency_id: { type: 'many2one', string: 'Currency', relation: 'res.currency' },
  },
};

const CURRENCY: ModelDef = {
  name: 'res.currency',
  description: 'Currency',
  order: 'active desc, name asc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Role / Administrator',
  fields: {
    id: ID,
    display_name: displayNameField(nameOf),
    name: { type: 'char', string: 'Currency', required: true },
    symbol: { type: 'char', string: 'Symbol' },
    active: { type: 'boolean', string: 'Active' },
  },
};

const CURRENCY_RATE: ModelDef = {
  name: 'res.currency.rate',
  description: 'Currency Rate',
  order: 'name desc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Role / Administrator',
  fields: {
    id: ID,
    display_name: displayNameField((row) => (typeof row.name === 'string' ? row.name : '')),
    name: { type: 'date', string: 'Date', required: true },
    rate: { type: 'float', string: 'Technical Rate' },
    currency_id: { type: 'many2one', string: 'Currency', relation: 'res.currency' },
    company_id: { type: 'many2one', string: 'Company', relation: 'res.company' },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
};

/**
 * `res.partner.category` as Odoo 19's base defines it (`_order = 'name, id'`, `_parent_store`):
 * the fields and the order of a read without `fields` as captured
 * (v2-kwargs-as-array-search_read, and the live server).
 */
const PARTNER_CATEGORY: ModelDef = {
  name: 'res.partner.category',
  description: 'Partner Tags',
  order: 'name asc, id asc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Contact/Creation',
  adminGroupBefore19: 'Extra Rights/Contact Creation',
  fields: {
    id: ID,
    display_name: displayNameField((row, db) => categoryName(row, db)),
    name: { type: 'char', string: 'Name', required: true },
    color: { type: 'integer', string: 'Color' },
    parent_id: { type: 'many2one', string: 'Category', relation: 'res.partner.category' },
    child_ids: {
      type: 'one2many',
      string: 'Child Tags',
      relation: 'res.partner.category',
      inverse: 'parent_id',
    },
    active: { type: 'boolean', string: 'Active' },
    parent_path: { type: 'char', string: 'Parent Path', readonly: true, computed: categoryPath },
    partner_ids: {
      type: 'many2many',
      string: 'Partners',
      relation: 'res.partner',
      // The other side of res.partner.category_id (one relation table in Odoo).
      computed: (row, db) =>
        db
          .rows('res.partner')
          .filter((partner) => Array.isArray(partner.category_id) && partner.category_id.includes(row.id))
          .map((partner) => partner.id),
    },
    create_uid: { type: 'many2one', string: 'Created by', relation: 'res.users', readonly: true },
    create_date: CREATE_DATE,
    write_uid: { type: 'many2one', string: 'Last Updated by', relation: 'res.users', readonly: true },
    write_date: WRITE_DATE,
  },
  defaults: () => ({ active: true }),
};

function categoryName(row: Row, db: Database): string {
  const parentId = row.parent_id;
  const parent = typeof parentId === 'number' ? db.row('res.partner.category', parentId) : undefined;
  return parent ? `${nameOf(parent)} / ${nameOf(row)}` : nameOf(row);
}

/** `parent_path` of a `_parent_store` model: the ids from the root down, each followed by `/`. */
function categoryPath(row: Row, db: Database): string {
  const parentId = row.parent_id;
  const parent = typeof parentId === 'number' ? db.row('res.partner.category', parentId) : undefined;
  return `${parent ? categoryPath(parent, db) : ''}${String(row.id)}/`;
}

const ATTACHMENT: ModelDef = {
  name: 'ir.attachment',
  description: 'Attachment',
  order: 'id desc',
  access: { read: 'user', write: 'user', create: 'user', unlink: 'user' },
  adminGroup: 'Role / Administrator',
  firstFreeId: 211,
  fields: {
    id: ID,
    display_name: displayNameField(nameOf),
    name: { type: 'char', string: 'Name', required: true },
    description: { type: 'text', string: 'Description' },
    datas: { type: 'binary', string: 'File Content (base64)' },
    file_size: { type: 'integer', string: 'File Size', readonly: true },
    mimetype: { type: 'char', string: 'Mime Type' },
    checksum: { type: 'char', string: 'Checksum/SHA1', readonly: true },
    res_model: { type: 'char', string: 'Resource Model' },
    res_id: { type: 'integer', string: 'Resource ID' },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
};

/**
 * `bus.bus`: exists, but no ACL grants any access to it, not even to the admin (capture
 * doc-bearer-bus.bus-admin-403), so every call on it is an AccessError.
 */
const BUS: ModelDef = {
  name: 'bus.bus',
  description: 'Communication Bus',
  order: 'id',
  access: { read: 'none', write: 'none', create: 'none', unlink: 'none' },
  adminGroup: 'Role / Administrator',
  module: 'bus',
  fields: {
    id: ID,
    display_name: displayNameField(() => ''),
    channel: { type: 'char', string: 'Channel' },
    message: { type: 'char', string: 'Message' },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
};

/**
 * `ir.model`: one record per model (the double's own, and one transient model), as `list_models`
 * (the MCP tool) reads it. Internal users read it; only administrators change it (base's ACLs).
 */
const IR_MODEL: ModelDef = {
  name: 'ir.model',
  description: 'Models',
  order: 'model asc',
  access: USERS_READ_ADMINS_WRITE,
  adminGroup: 'Role / Administrator',
  fields: {
    id: ID,
    display_name: displayNameField(nameOf),
    model: { type: 'char', string: 'Model', required: true },
    name: { type: 'char', string: 'Model Description', required: true },
    transient: { type: 'boolean', string: 'Transient Model', readonly: true },
    create_date: CREATE_DATE,
    write_date: WRITE_DATE,
  },
};

/** Every model the double serves. */
export const MODELS: readonly ModelDef[] = [
  PARTNER,
  USERS,
  CONFIG_PARAMETER,
  COUNTRY,
  COMPANY,
  CURRENCY,
  CURRENCY_RATE,
  PARTNER_CATEGORY,
  ATTACHMENT,
  BUS,
  IR_MODEL,
];

/** Methods that exist on every model but may not be called remotely in 19+ (`@api.private`). */
export const API_PRIVATE_METHODS: ReadonlySet<string> = new Set([
  'lock_for_update',
  'sudo',
  'with_context',
  'browse',
]);

const SEED_DATE = '2026-11-21 20:59:01';
/** A 1x1 PNG, standing in for partner images. */
const TINY_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** The avatar Odoo generates for a new user's partner (`_avatar_generate_svg`), here for "Limited User". */
const USER_AVATAR_SVG = Buffer.from(
  "<?xml version='1.0' encoding='UTF-8' ?><svg height='180' width='180' xmlns='http://www.w3.org/2000/svg' " +
    "xmlns:xlink='http://www.w3.org/1999/xlink'><rect fill='hsl(104, 59%, 45%)' height='180' width='180'/>" +
    "<text fill='#ffffff' font-size='96' text-anchor='middle' x='90' y='125' font-family='sans-serif'>L</text></svg>",
).toString('base64');

function partner(id: number, name: string, extra: Row = {}): Row {
  return {
    id,
    name,
    email: false,
    phone: false,
    is_company: false,
    type: 'contact',
    parent_id: false,
    country_id: false,
    company_id: false,
    category_id: [],
    comment: false,
    lang: 'en_US',
    tz: false,
    active: true,
    image_1920: false,
    image_128: false,
    create_date: SEED_DATE,
    write_date: SEED_DATE,
    ...extra,
  };
}

function company(id: number, name: string, email: string, countryId: number | false, extra: Row = {}): Row {
  return partner(id, name, { is_company: true, email, country_id: countryId, ...extra });
}

/** Base records every database has (a fresh Odoo without demo data). */
function basePartners(): Row[] {
  return [
    company(1, 'YourCompany', 'info@yourcompany.com', 233, { phone: '+1 555-555-5556' }),
    partner(2, 'OdooBot', { email: 'odoobot@example.com', active: false }),
    partner(3, 'Mitchell Admin', { parent_id: 1, email: 'admin@example.com', tz: 'Europe/Brussels' }),
    partner(4, 'Public user', { active: false }),
  ];
}

/**
 * Demo partners (the first database only), shaped after the captures' erp_a: the names and emails
 * of ids 9, 10, 11, 13, 15, 27, 28 and 34 are as captured, and so is the companies' spread over
 * countries (7 United States, one each in Liechtenstein, Montenegro and San Marino:
 * bridge-read_group-*), though which company is the one in Liechtenstein is a guess.
 */
function demoPartners(): Row[] {
  return [
    company(8, 'Wood Corner', 'wood.corner26@example.com', 233, { category_id: [7, 6] }),
    company(9, 'Acme Corporation', 'acme_corp@yourcompany.example.com', 233, { category_id: [7] }),
    company(10, 'Gemini Furniture', 'gemini_furniture@fake.geminifurniture.com', 203, {
      category_id: [4, 7],
    }),
    company(11, 'Ready Mat', 'ready.mat28@example.com', 233, { category_id: [7, 6] }),
    company(12, 'OpenWood', 'openwood@example.com', 128),
    company(13, 'LightsUp', 'lightsup@example.com', 139),
    company(14, 'The Jackson Group', 'jackson.group82@example.com', 233),
    company(15, 'Azure Interior', 'azure.Interior24@example.com', 233, {
      phone: '(870)-931-0505',
      image_1920: TINY_PNG,
      image_128: TINY_PNG,
      category_id: [5],
      write_date: '2026-11-21 20:59:40',
    }),
    company(16, 'Lumber Inc', 'lumber-inv92@example.com', 233),
    partner(17, 'Willie Burke', { parent_id: 8, email: 'willie.burke80@example.com', country_id: 233 }),
    partner(18, 'Ron Gibson', { parent_id: 8, email: 'ron.gibson76@example.com', country_id: 233 }),
    partner(27, 'Brandon Freeman', {
      parent_id: 15,
      email: 'brandon.freeman55@example.com',
      country_id: 233,
    }),
    partner(28, 'Nicole Ford', { parent_id: 15, email: 'nicole.ford75@example.com', country_id: 233 }),
    partner(33, 'Tom Ruiz', { parent_id: 8, email: 'tom.ruiz89@example.com', country_id: 233 }),
    partner(34, 'Colleen Diaz', { parent_id: 15, email: 'colleen.diaz83@example.com', country_id: 233 }),
    partner(42, 'Limited User', {
      create_date: '2026-11-21 21:00:58',
      write_date: '2026-11-21 21:00:58',
      // A user's partner gets a generated SVG avatar (316 bytes: v2-read-binary-bin_size-ok).
      image_1920: USER_AVATAR_SVG,
      image_128: USER_AVATAR_SVG,
    }),
  ];
}

function userName(user: ErpUser): string {
  if (user.uid === 2) return 'Mitchell Admin';
  return `${user.login.charAt(0).toUpperCase()}${user.login.slice(1)} User`;
}

/** Fills a freshly created database with its seed data (every record gets create/write dates). */
export function seedDatabase(db: Database, options: { demo: boolean; users: readonly ErpUser[] }): void {
  seedRecords(db, options);
  for (const def of MODELS) {
    if (!def.fields.create_date) continue;
    for (const row of db.rows(def.name)) {
      row.create_date ??= SEED_DATE;
      row.write_date ??= row.create_date;
    }
  }
}

function seedRecords(db: Database, options: { demo: boolean; users: readonly ErpUser[] }): void {
  for (const row of [...basePartners(), ...(options.demo ? demoPartners() : [])])
    db.insert('res.partner', row);
  for (const [id, name, code] of [
    [21, 'Belgium', 'BE'],
    [128, 'Liechtenstein', 'LI'],
    [139, 'Montenegro', 'ME'],
    [203, 'San Marino', 'SM'],
    [233, 'United States', 'US'],
  ] as const) {
    db.insert('res.country', { id, name, code });
  }
  for (const [index, def] of MODELS.entries()) {
    db.insert('ir.model', { id: index + 1, model: def.name, name: def.description, transient: false });
  }
  db.insert('ir.model', {
    id: MODELS.length + 1,
    model: 'res.config.settings',
    name: 'Config Settings',
    transient: true,
  });
  db.insert('res.currency', { id: 1, name: 'USD', symbol: '$', active: true });
  db.insert('res.currency', { id: 2, name: 'VEF', symbol: 'Bs.F', active: false });
  db.insert('res.company', { id: 1, name: 'YourCompany', sequence: 0, partner_id: 1, currency_id: 1 });
  db.insert('res.currency.rate', { id: 1, name: '2010-01-01', rate: 1, currency_id: 1, company_id: 1 });
  db.insert('res.currency.rate', { id: 2, name: '2010-01-01', rate: 5.864, currency_id: 2, company_id: 1 });
  // base's demo tags (res_partner_category_* of base/data/res_partner_demo.xml), as captured.
  for (const [id, name, color, parentId] of [
    [1, 'Vendor', 2, false],
    [2, 'Prospects', 3, false],
    [3, 'Employees', 4, false],
    [4, 'Consulting Services', 5, false],
    [5, 'Services', 7, false],
    [6, 'Office Supplies', 8, 1],
    [7, 'Desk Manufacturers', 10, 1],
  ] as const) {
    db.insert('res.partner.category', {
      id,
      name,
      color,
      parent_id: parentId,
      active: true,
      create_uid: 1,
      write_uid: 1,
    });
  }
  db.insert('ir.config_parameter', { id: 1, key: 'web.base.url', value: 'http://localhost:8069' });
  db.insert('ir.config_parameter', {
    id: 2,
    key: 'database.uuid',
    value: `${db.name}-0000-4000-8000-000000000000`,
  });
  db.insert('ir.config_parameter', { id: 3, key: 'base.login_cooldown_after', value: '5' });
  // The HMAC key of `odoo.tools.hmac` (the /doc-bearer ETags). Random in Odoo; fixed per database
  // here, so a double answers the same ETags after a restart.
  db.insert('ir.config_parameter', {
    id: 4,
    key: 'database.secret',
    value: createHash('sha256').update(`erp-double database.secret ${db.name}`).digest('hex').slice(0, 36),
  });

  db.insert('res.users', {
    id: 1,
    name: 'OdooBot',
    login: '__system__',
    partner_id: 2,
    active: false,
    share: false,
  });
  const seen = new Set<number>([1]);
  for (const user of options.users) {
    if (user.db !== db.name || seen.has(user.uid)) continue;
    seen.add(user.uid);
    const partnerId = user.uid === 2 ? 3 : user.uid === 7 && db.row('res.partner', 42) ? 42 : false;
    db.insert('res.users', {
      id: user.uid,
      name: userName(user),
      login: user.login,
      login_date: SEED_DATE,
      partner_id: partnerId,
      company_id: 1,
      company_ids: [1],
      tz: 'Europe/Brussels',
      signature: `<div>${userName(user)}</div>`,
      email: user.uid === 2 ? 'admin@example.com' : false,
      share: false,
      notification_type: 'email',
      active: true,
    });
  }
}
