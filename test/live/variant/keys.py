# keys.py - run by run.sh inside `odoo-bin shell -d <db>`: the users and API keys of one variant
# database, made exactly as ../shared/odoo19/start.sh makes them (this is a copy of its key script).
# admin/admin; with WITH_EXTRAS=1 also limited/limited (Internal User only). Keys: admin rpc;
# with extras, limited rpc (1 year), admin expired (2020) and admin with no scope. Keys still
# valid in $KEYS_JSON are kept (NEW_KEYS=1 makes new ones). Prints KEYS_JSON_OUT=<json>.
import datetime, json, os
from odoo.addons.base.models.res_users import KEY_CRYPT_CONTEXT, INDEX_SIZE

db = env.cr.dbname
try:
    with open(os.environ['KEYS_JSON']) as f:
        old = json.load(f).get(db, {})
except Exception:
    old = {}
if os.environ.get('NEW_KEYS') == '1':
    old = {}
now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
Users = env['res.users'].sudo().with_context(active_test=False, no_reset_password=True)
Keys = env['res.users.apikeys']

def password_is(user, pw):
    env.cr.execute("SELECT COALESCE(password, '') FROM res_users WHERE id = %s", [user.id])
    hashed = env.cr.fetchone()[0]
    try:
        return bool(hashed) and user._crypt_context().verify(pw, hashed)
    except Exception:
        return False

def ensure_user(user, vals, pw):
    user = user.sudo()
    todo = {k: v for k, v in vals.items() if k != 'group_ids' and user[k] != v}
    if 'group_ids' in vals and set(user.group_ids.ids) != set(vals['group_ids'][0][2]):
        todo['group_ids'] = vals['group_ids']
    if not password_is(user, pw):
        todo['password'] = pw
    if todo:
        user.write(todo)
        print('updated user %s: %s' % (user.login, sorted(todo)))

admin = env.ref('base.user_admin')
ensure_user(admin, {'active': True}, 'admin')
out = {'admin_uid': admin.id}

def key_row(key):
    env.cr.execute("SELECT user_id, scope, expiration_date, key FROM res_users_apikeys WHERE index = %s",
                   [key[:INDEX_SIZE]])
    for uid, scope, exp, hashed in env.cr.fetchall():
        if KEY_CRYPT_CONTEXT.verify(key, hashed):
            return uid, scope, exp
    return None

def ensure_key(slot, uid, scope, expiration, expired=False):
    name = 'proxy-tests %s' % slot
    key = old.get(slot)
    if key:
        row = key_row(key)
        if row and row[0] == uid and row[1] == scope:
            exp = row[2]
            if expired and exp is not None and exp < now:
                return key
            if not expired and (exp is None or exp > now + datetime.timedelta(days=7)):
                return key
    env.cr.execute("DELETE FROM res_users_apikeys WHERE user_id = %s AND name = %s", [uid, name])
    # sudo: lets a non-admin key exceed the group's max duration, and allows a past date
    key = Keys.with_user(uid).sudo()._generate(scope, name, expiration)
    print('generated %s key %s for uid %s' % (db, slot, uid))
    return key

out['admin_rpc'] = ensure_key('admin_rpc', admin.id, 'rpc', None)
if os.environ.get('WITH_EXTRAS') == '1':
    limited = Users.search([('login', '=', 'limited')], limit=1)
    vals = {'name': 'Limited User', 'login': 'limited', 'active': True,
            'group_ids': [(6, 0, [env.ref('base.group_user').id])]}
    if limited:
        ensure_user(limited, vals, 'limited')
    else:
        limited = Users.create(dict(vals, password='limited'))
        print('created user limited, uid %s' % limited.id)
    assert not limited.has_group('base.group_partner_manager'), 'limited must not create partners'
    assert not limited.has_group('base.group_system')
    out['limited_uid'] = limited.id
    out['limited_rpc'] = ensure_key('limited_rpc', limited.id, 'rpc', now + datetime.timedelta(days=365))
    out['admin_expired'] = ensure_key('admin_expired', admin.id, 'rpc', datetime.datetime(2020, 1, 1), expired=True)
    out['admin_any'] = ensure_key('admin_any', admin.id, None, None)
env.cr.commit()
print('KEYS_JSON_OUT=' + json.dumps(out))
