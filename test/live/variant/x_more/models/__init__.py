from . import x_more_message, res_partner, res_users
