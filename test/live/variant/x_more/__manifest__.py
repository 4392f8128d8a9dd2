{
    'name': 'x_more (variant: what contacts+mail add to res.partner, roughly)',
    'version': '19.0.1.0',
    'depends': ['base', 'web'],
    'license': 'LGPL-3',
    'data': [
        'security/x_more_security.xml',
        'security/ir.model.access.csv',
    ],
    'demo': ['data/x_more_demo.xml'],
    'installable': True,
}
