from odoo import fields, models


class ResUsers(models.Model):
    _inherit = 'res.users'

    notification_type = fields.Selection(
        [('email', 'Handle by Emails'), ('inbox', 'Handle in the app')], default='email', required=True)
    out_of_office_message = fields.Char()
