from odoo import api, fields, models


class XMoreMessage(models.Model):
    _name = 'x.more.message'
    _description = 'Variant message (mail.message-like)'
    _order = 'id desc'

    partner_id = fields.Many2one('res.partner', required=True, ondelete='cascade', index=True)
    author_id = fields.Many2one('res.partner', ondelete='set null')
    body = fields.Html()
    subject = fields.Char()
    message_type = fields.Selection(
        [('comment', 'Comment'), ('notification', 'Notification'), ('email', 'Email')],
        default='comment', required=True)
    subtype = fields.Char(default='note')
    date = fields.Datetime(default=fields.Datetime.now)


class XMoreActivity(models.Model):
    _name = 'x.more.activity'
    _description = 'Variant activity (mail.activity-like)'

    partner_id = fields.Many2one('res.partner', required=True, ondelete='cascade', index=True)
    summary = fields.Char()
    date_deadline = fields.Date(required=True, default=fields.Date.context_today)
    user_id = fields.Many2one('res.users', default=lambda self: self.env.user)
