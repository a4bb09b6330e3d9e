from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_macros.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_agent_item = l_0_agent_tree = l_0_tokens_table = l_0_models_table = l_0_category_costs = l_0_status_badge = missing
    try:
        t_1 = environment.filters['min']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'min' found.")
    try:
        t_2 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_3 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    pass
    def macro(l_1_session, l_1_agent, l_1_root):
        t_4 = []
        if l_1_session is missing:
            l_1_session = undefined("parameter 'session' was not provided", name='session')
        if l_1_agent is missing:
            l_1_agent = undefined("parameter 'agent' was not provided", name='agent')
        if l_1_root is missing:
            l_1_root = undefined("parameter 'root' was not provided", name='root')
        pass
        t_4.append(
            '<li>',
        )
        if environment.getattr(l_1_agent, 'has_transcript'):
            pass
            t_4.append(
                '<a href="',
            )
            if (environment.getattr(l_1_agent, 'agent_id') == environment.getattr(l_1_session, 'session_id')):
                pass
                t_4.extend((
                    escape(l_1_root),
                    'sessions/',
                    escape(environment.getattr(l_1_session, 'session_id')),
                    '/index.html',
                ))
            else:
                pass
                t_4.extend((
                    escape(l_1_root),
                    'sessions/',
                    escape(environment.getattr(l_1_session, 'session_id')),
                    '/agents/',
                    escape(environment.getattr(l_1_agent, 'agent_id')),
                    '.html',
                ))
            t_4.extend((
                '">',
                escape((environment.getattr(l_1_agent, 'agent_type') or environment.getattr(l_1_agent, 'kind'))),
                '</a>',
            ))
        else:
            pass
            t_4.append(
                escape((environment.getattr(l_1_agent, 'agent_type') or environment.getattr(l_1_agent, 'kind'))),
            )
        t_4.extend((
            escape(context.call((undefined(name='status_badge') if l_0_status_badge is missing else l_0_status_badge), environment.getattr(l_1_agent, 'status'), environment.getattr(l_1_agent, 'last_seen_at'))),
            ' ',
        ))
        if (not environment.getattr(l_1_agent, 'has_transcript')):
            pass
            t_4.append(
                'transcript not in the corpus',
            )
        elif environment.getattr(l_1_session, 'excluded_reason'):
            pass
            t_4.extend((
                escape(t_2(environment.getattr(environment.getattr(l_1_agent, 'subtree_tokens'), 'total'))),
                ' tokens',
            ))
        else:
            pass
            t_4.append(
                escape(t_3(environment.getattr(l_1_agent, 'subtree_cost'))),
            )
        return concat(t_4)
    context.exported_vars.add('agent_item')
    context.vars['agent_item'] = l_0_agent_item = Macro(environment, macro, 'agent_item', ('session', 'agent', 'root'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_session, l_1_agents, l_1_agent_id, l_1_root):
        t_5 = []
        l_1_namespace = resolve('namespace')
        l_1_range = resolve('range')
        l_1_top = l_1_ns = missing
        if l_1_session is missing:
            l_1_session = undefined("parameter 'session' was not provided", name='session')
        if l_1_agents is missing:
            l_1_agents = undefined("parameter 'agents' was not provided", name='agents')
        if l_1_agent_id is missing:
            l_1_agent_id = undefined("parameter 'agent_id' was not provided", name='agent_id')
        if l_1_root is missing:
            l_1_root = undefined("parameter 'root' was not provided", name='root')
        pass
        l_1_top = environment.getitem(l_1_agents, l_1_agent_id)
        l_1_ns = context.call((undefined(name='namespace') if l_1_namespace is missing else l_1_namespace), inside=False, done=False, level=0)
        def t_6(fiter):
            for l_2_agent in fiter:
                if (not environment.getattr((undefined(name='ns') if l_1_ns is missing else l_1_ns), 'done')):
                    yield l_2_agent
        for l_2_agent in t_6((environment.getattr(l_1_session, 'agents') if environment.getattr((undefined(name='top') if l_1_top is missing else l_1_top), 'children') else [(undefined(name='top') if l_1_top is missing else l_1_top)])):
            l_2_level = resolve('level')
            _loop_vars = {}
            pass
            if (environment.getattr(l_2_agent, 'agent_id') == l_1_agent_id):
                pass
                if not isinstance(l_1_ns, Namespace):
                    raise TemplateRuntimeError("cannot assign attribute on non-namespace object")
                l_1_ns['inside'] = True
                t_5.extend((
                    escape(context.call((undefined(name='agent_item') if l_0_agent_item is missing else l_0_agent_item), l_1_session, l_2_agent, l_1_root, _loop_vars=_loop_vars)),
                    '\n',
                ))
            elif (environment.getattr((undefined(name='ns') if l_1_ns is missing else l_1_ns), 'inside') and (environment.getattr(l_2_agent, 'depth') <= environment.getattr((undefined(name='top') if l_1_top is missing else l_1_top), 'depth'))):
                pass
                if not isinstance(l_1_ns, Namespace):
                    raise TemplateRuntimeError("cannot assign attribute on non-namespace object")
                l_1_ns['done'] = True
            elif environment.getattr((undefined(name='ns') if l_1_ns is missing else l_1_ns), 'inside'):
                pass
                l_2_level = t_1(environment, [(environment.getattr(l_2_agent, 'depth') - environment.getattr((undefined(name='top') if l_1_top is missing else l_1_top), 'depth')), 32])
                _loop_vars['level'] = l_2_level
                if ((undefined(name='level') if l_2_level is missing else l_2_level) > environment.getattr((undefined(name='ns') if l_1_ns is missing else l_1_ns), 'level')):
                    pass
                    t_5.append(
                        '<ul>',
                    )
                else:
                    pass
                    t_5.append(
                        '</li>',
                    )
                    for l_3__ in context.call((undefined(name='range') if l_1_range is missing else l_1_range), (environment.getattr((undefined(name='ns') if l_1_ns is missing else l_1_ns), 'level') - (undefined(name='level') if l_2_level is missing else l_2_level)), _loop_vars=_loop_vars):
                        _loop_vars = {}
                        pass
                        t_5.append(
                            '</ul></li>',
                        )
                    l_3__ = missing
                if not isinstance(l_1_ns, Namespace):
                    raise TemplateRuntimeError("cannot assign attribute on non-namespace object")
                l_1_ns['level'] = (undefined(name='level') if l_2_level is missing else l_2_level)
                t_5.append(
                    escape(context.call((undefined(name='agent_item') if l_0_agent_item is missing else l_0_agent_item), l_1_session, l_2_agent, l_1_root, _loop_vars=_loop_vars)),
                )
                if ((environment.getattr(l_2_agent, 'depth') - environment.getattr((undefined(name='top') if l_1_top is missing else l_1_top), 'depth')) > (undefined(name='level') if l_2_level is missing else l_2_level)):
                    pass
                    t_5.extend((
                        ' <span class="note">depth ',
                        escape((environment.getattr(l_2_agent, 'depth') - environment.getattr((undefined(name='top') if l_1_top is missing else l_1_top), 'depth'))),
                        '</span>',
                    ))
        l_2_agent = l_2_level = missing
        t_5.append(
            '</li>',
        )
        for l_2__ in context.call((undefined(name='range') if l_1_range is missing else l_1_range), environment.getattr((undefined(name='ns') if l_1_ns is missing else l_1_ns), 'level')):
            _loop_vars = {}
            pass
            t_5.append(
                '</ul></li>',
            )
        l_2__ = missing
        return concat(t_5)
    context.exported_vars.add('agent_tree')
    context.vars['agent_tree'] = l_0_agent_tree = Macro(environment, macro, 'agent_tree', ('session', 'agents', 'agent_id', 'root'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_tokens, l_1_costs):
        t_7 = []
        if l_1_tokens is missing:
            l_1_tokens = undefined("parameter 'tokens' was not provided", name='tokens')
        if l_1_costs is missing:
            l_1_costs = None
        pass
        t_7.append(
            '<table class="compact">\n<thead><tr><th>Category</th><th class="num">Tokens</th>',
        )
        if l_1_costs:
            pass
            t_7.append(
                '<th class="num">Cost</th>',
            )
        t_7.append(
            '</tr></thead>\n<tbody>\n',
        )
        for (l_2_name, l_2_label) in [('input', 'Input'), ('output', 'Output'), ('cache_read', 'Cache read'), ('cache_write_5m', 'Cache write 5m'), ('cache_write_1h', 'Cache write 1h')]:
            _loop_vars = {}
            pass
            t_7.extend((
                '<tr><th>',
                escape(l_2_label),
                '</th><td class="num">',
                escape(t_2(environment.getitem(l_1_tokens, l_2_name))),
                '</td>',
            ))
            if l_1_costs:
                pass
                t_7.extend((
                    '<td class="num">',
                    escape(t_3(environment.getitem(l_1_costs, l_2_name))),
                    '</td>',
                ))
            t_7.append(
                '</tr>\n',
            )
        l_2_name = l_2_label = missing
        t_7.append(
            '</tbody>\n</table>',
        )
        return concat(t_7)
    context.exported_vars.add('tokens_table')
    context.vars['tokens_table'] = l_0_tokens_table = Macro(environment, macro, 'tokens_table', ('tokens', 'costs'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_by_model, l_1_costs_known):
        t_8 = []
        if l_1_by_model is missing:
            l_1_by_model = undefined("parameter 'by_model' was not provided", name='by_model')
        if l_1_costs_known is missing:
            l_1_costs_known = True
        pass
        t_8.append(
            '<table class="compact"><thead><tr><th>Model</th><th class="num">Tokens</th>',
        )
        if l_1_costs_known:
            pass
            t_8.append(
                '<th class="num">Cost</th>',
            )
        t_8.append(
            '</tr></thead><tbody>\n',
        )
        for (l_2_model_id, (l_2_tokens, l_2_cost)) in context.call(environment.getattr(l_1_by_model, 'items')):
            _loop_vars = {}
            pass
            t_8.extend((
                '<tr><td>',
                escape(l_2_model_id),
                '</td><td class="num">',
                escape(t_2(environment.getattr(l_2_tokens, 'total'))),
                '</td>',
            ))
            if l_1_costs_known:
                pass
                t_8.extend((
                    '<td class="num">',
                    escape(t_3(l_2_cost)),
                    '</td>',
                ))
            t_8.append(
                '</tr>',
            )
        l_2_model_id = l_2_tokens = l_2_cost = missing
        t_8.append(
            '</tbody></table>',
        )
        return concat(t_8)
    context.exported_vars.add('models_table')
    context.vars['models_table'] = l_0_models_table = Macro(environment, macro, 'models_table', ('by_model', 'costs_known'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_costs):
        t_9 = []
        if l_1_costs is missing:
            l_1_costs = undefined("parameter 'costs' was not provided", name='costs')
        pass
        t_9.append(
            '<table class="compact"><thead><tr><th>Category</th><th class="num">Cost</th></tr></thead><tbody>\n',
        )
        for (l_2_name, l_2_label) in [('input', 'Input'), ('output', 'Output'), ('cache_read', 'Cache read'), ('cache_write_5m', 'Cache write 5m'), ('cache_write_1h', 'Cache write 1h')]:
            _loop_vars = {}
            pass
            t_9.extend((
                '<tr><th>',
                escape(l_2_label),
                '</th><td class="num">',
                escape(t_3(environment.getitem(l_1_costs, l_2_name))),
                '</td></tr>\n',
            ))
        l_2_name = l_2_label = missing
        t_9.append(
            '</tbody></table>',
        )
        return concat(t_9)
    context.exported_vars.add('category_costs')
    context.vars['category_costs'] = l_0_category_costs = Macro(environment, macro, 'category_costs', ('costs',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_status, l_1_last_active):
        t_10 = []
        l_1_status_badge_html = resolve('status_badge_html')
        if l_1_status is missing:
            l_1_status = undefined("parameter 'status' was not provided", name='status')
        if l_1_last_active is missing:
            l_1_last_active = undefined("parameter 'last_active' was not provided", name='last_active')
        pass
        t_10.append(
            escape(context.call((undefined(name='status_badge_html') if l_1_status_badge_html is missing else l_1_status_badge_html), l_1_status, l_1_last_active)),
        )
        return concat(t_10)
    context.exported_vars.add('status_badge')
    context.vars['status_badge'] = l_0_status_badge = Macro(environment, macro, 'status_badge', ('status', 'last_active'), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '1=30&2=42&3=76&10=98&11=112&12=113&13=114&14=122&15=126&16=131&17=135&18=136&19=138&20=140&21=159&24=174&27=185&29=195&31=203&32=208&38=231&39=241&40=249&44=277&46=285&47=290&54=302&55=311'