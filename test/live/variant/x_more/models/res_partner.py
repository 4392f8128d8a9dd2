import re

from odoo import api, fields, models


class ResPartner(models.Model):
    _inherit = 'res.partner'

    message_ids = fields.One2many('x.more.message', 'partner_id', string='Messages')
    message_follower_count = fields.Integer(compute='_compute_message_counts')
    message_needaction = fields.Boolean(compute='_compute_message_counts')
    activity_ids = fields.One2many('x.more.activity', 'partner_id', string='Activities')
    activity_state = fields.Selection(
        [('overdue', 'Overdue'), ('today', 'Today'), ('planned', 'Planned')],
        compute='_compute_activity_state')
    activity_date_deadline = fields.Date(compute='_compute_activity_state')
    email_normalized = fields.Char(compute='_compute_email_normalized', store=True, index=True)
    phone_sanitized = fields.Char(compute='_compute_phone_sanitized', store=True, index=True)
    phone_blacklisted = fields.Boolean(default=False)
    is_blacklisted = fields.Boolean(default=False)
    im_status = fields.Char(compute='_compute_im_status')
    x_more_note = fields.Text('Variant note')

    def _compute_message_counts(self):
        for partner in self:
            partner.message_follower_count = 0
            partner.message_needaction = False

    @api.depends('activity_ids.date_deadline')
    def _compute_activity_state(self):
        today = fields.Date.context_today(self)
        for partner in self:
            dates = partner.activity_ids.mapped('date_deadline')
            first = min(dates) if dates else False
            partner.activity_date_deadline = first
            if not first:
                partner.activity_state = False
            elif first < today:
                partner.activity_state = 'overdue'
            elif first == today:
                partner.activity_state = 'today'
            else:
                partner.activity_state = 'planned'

    @api.depends('email')
    def _compute_email_normalized(self):
        for partner in self:
            found = re.findall(r'[^\s<>,;"]+@[^\s<>,;"]+', partner.email or '')
            partner.email_normalized = found[0].lower() if found else False

    @api.depends('phone')
    def _compute_phone_sanitized(self):
        for partner in self:
            digits = re.sub(r'[^0-9+]', '', partner.phone or '')
            partner.phone_sanitized = digits or False

    def _compute_im_status(self):
        for partner in self:
            partner.im_status = 'im_partner'

    def message_post(self, body='', subject=False, message_type='comment', subtype_xmlid=None, **kwargs):
        """Public, keyword arguments, returns the new message's id (like mail.thread's, which returns a record)."""
        self.ensure_one()
        message = self.env['x.more.message'].create({
            'partner_id': self.id,
            'author_id': self.env.user.partner_id.id,
            'body': body,
            'subject': subject,
            'message_type': message_type,
            'subtype': (subtype_xmlid or 'mail.mt_note').split('.')[-1],
        })
        return message.id

    def activity_schedule(self, summary='', date_deadline=None, **kwargs):
        ids = []
        for partner in self:
            vals = {'partner_id': partner.id, 'summary': summary}
            if date_deadline:
                vals['date_deadline'] = date_deadline
            ids.append(self.env['x.more.activity'].create(vals).id)
        return ids

    def message_get_followers(self):
        return [{'partner_id': p.id, 'name': p.display_name} for p in self]
