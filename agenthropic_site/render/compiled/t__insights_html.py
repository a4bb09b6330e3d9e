from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_insights.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_share = l_0_elapsed = l_0_cache_table = l_0_tools_table = l_0_largest_table = missing
    try:
        t_1 = environment.filters['format']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'format' found.")
    try:
        t_2 = environment.filters['short_time']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'short_time' found.")
    try:
        t_3 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_4 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_value):
        t_6 = []
        if l_1_value is missing:
            l_1_value = undefined("parameter 'value' was not provided", name='value')
        pass
        if t_5(l_1_value):
            pass
            t_6.append(
                '—',
            )
        else:
            pass
            t_6.extend((
                escape(t_1('%.1f', (l_1_value * 100))),
                '%',
            ))
        return concat(t_6)
    context.exported_vars.add('share')
    context.vars['share'] = l_0_share = Macro(environment, macro, 'share', ('value',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_ms):
        t_7 = []
        if l_1_ms is missing:
            l_1_ms = undefined("parameter 'ms' was not provided", name='ms')
        pass
        if t_5(l_1_ms):
            pass
            t_7.append(
                '—',
            )
        elif (l_1_ms < 1000):
            pass
            t_7.extend((
                escape(l_1_ms),
                ' ms',
            ))
        elif (l_1_ms < 60000):
            pass
            t_7.extend((
                escape(t_1('%.1f', (l_1_ms / 1000))),
                ' s',
            ))
        else:
            pass
            t_7.extend((
                escape(t_1('%.1f', (l_1_ms / 60000))),
                ' min',
            ))
        return concat(t_7)
    context.exported_vars.add('elapsed')
    context.vars['elapsed'] = l_0_elapsed = Macro(environment, macro, 'elapsed', ('ms',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_cache):
        t_8 = []
        if l_1_cache is missing:
            l_1_cache = undefined("parameter 'cache' was not provided", name='cache')
        pass
        t_8.extend((
            '<table class="compact cache-efficiency">\n<tbody>\n<tr><th>Cache-read share of input</th><td class="num">',
            escape(context.call((undefined(name='share') if l_0_share is missing else l_0_share), environment.getattr(l_1_cache, 'read_share'))),
            '</td></tr>\n<tr><th>Input tokens (fresh, read, written)</th><td class="num">',
            escape(t_3(environment.getattr(l_1_cache, 'input_tokens'))),
            '</td></tr>\n<tr><th>Cost</th><td class="num">',
            escape(t_4(environment.getattr(l_1_cache, 'cost'))),
            '</td></tr>\n<tr><th>Without caching</th><td class="num">',
            escape(t_4(environment.getattr(l_1_cache, 'uncached_cost'))),
            '</td></tr>\n<tr><th>Saved by caching</th><td class="num">',
            escape(t_4(environment.getattr(l_1_cache, 'saved'))),
            '</td></tr>\n<tr><th>5-minute cache writes</th><td class="num">',
            escape(t_3(environment.getattr(environment.getattr(l_1_cache, 'tokens'), 'cache_write_5m'))),
            ' tokens · ',
            escape(t_4(environment.getattr(l_1_cache, 'write_5m_cost'))),
            '</td></tr>\n<tr><th>1-hour cache writes</th><td class="num">',
            escape(t_3(environment.getattr(environment.getattr(l_1_cache, 'tokens'), 'cache_write_1h'))),
            ' tokens · ',
            escape(t_4(environment.getattr(l_1_cache, 'write_1h_cost'))),
            '</td></tr>\n</tbody>\n</table>',
        ))
        return concat(t_8)
    context.exported_vars.add('cache_table')
    context.vars['cache_table'] = l_0_cache_table = Macro(environment, macro, 'cache_table', ('cache',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_stats, l_1_timed, l_1_label):
        t_9 = []
        if l_1_stats is missing:
            l_1_stats = undefined("parameter 'stats' was not provided", name='stats')
        if l_1_timed is missing:
            l_1_timed = True
        if l_1_label is missing:
            l_1_label = 'Tool'
        pass
        t_9.extend((
            '<table class="sortable compact tool-activity">\n<thead><tr><th>',
            escape(l_1_label),
            '</th><th class="num">Calls</th><th class="num">Errors</th>',
        ))
        if l_1_timed:
            pass
            t_9.append(
                '<th class="num">Median time</th><th class="num">Longest</th>',
            )
        t_9.append(
            '</tr></thead>\n<tbody>\n',
        )
        for l_2_stat in l_1_stats:
            _loop_vars = {}
            pass
            t_9.append(
                '<tr',
            )
            if environment.getattr(l_2_stat, 'errors'):
                pass
                t_9.append(
                    ' class="has-errors"',
                )
            t_9.extend((
                '><td><code>',
                escape(environment.getattr(l_2_stat, 'name')),
                '</code></td><td class="num" data-sort="',
                escape(environment.getattr(l_2_stat, 'calls')),
                '">',
                escape(t_3(environment.getattr(l_2_stat, 'calls'))),
                '</td><td class="num" data-sort="',
                escape(environment.getattr(l_2_stat, 'errors')),
                '">',
                escape(t_3(environment.getattr(l_2_stat, 'errors'))),
                '</td>\n',
            ))
            if l_1_timed:
                pass
                t_9.extend((
                    '<td class="num" data-sort="',
                    escape((environment.getattr(l_2_stat, 'median_ms') if (not t_5(environment.getattr(l_2_stat, 'median_ms'))) else '')),
                    '">',
                    escape(context.call((undefined(name='elapsed') if l_0_elapsed is missing else l_0_elapsed), environment.getattr(l_2_stat, 'median_ms'), _loop_vars=_loop_vars)),
                    '</td><td class="num" data-sort="',
                    escape((environment.getattr(l_2_stat, 'max_ms') if (not t_5(environment.getattr(l_2_stat, 'max_ms'))) else '')),
                    '">',
                    escape(context.call((undefined(name='elapsed') if l_0_elapsed is missing else l_0_elapsed), environment.getattr(l_2_stat, 'max_ms'), _loop_vars=_loop_vars)),
                    '</td>',
                ))
            t_9.append(
                '</tr>\n',
            )
        l_2_stat = missing
        t_9.append(
            '</tbody>\n</table>',
        )
        return concat(t_9)
    context.exported_vars.add('tools_table')
    context.vars['tools_table'] = l_0_tools_table = Macro(environment, macro, 'tools_table', ('stats', 'timed', 'label'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_session, l_1_points, l_1_agents, l_1_agent_href):
        t_10 = []
        if l_1_session is missing:
            l_1_session = undefined("parameter 'session' was not provided", name='session')
        if l_1_points is missing:
            l_1_points = undefined("parameter 'points' was not provided", name='points')
        if l_1_agents is missing:
            l_1_agents = undefined("parameter 'agents' was not provided", name='agents')
        if l_1_agent_href is missing:
            l_1_agent_href = undefined("parameter 'agent_href' was not provided", name='agent_href')
        pass
        t_10.append(
            '<table class="compact largest-requests">\n<thead><tr><th>When</th><th>Agent</th><th>Model</th><th class="num">Context</th><th class="num">Cost</th></tr></thead>\n<tbody>\n',
        )
        for l_2_point in l_1_points:
            _loop_vars = {}
            pass
            t_10.append(
                '<tr',
            )
            if environment.getattr(l_2_point, 'long_context'):
                pass
                t_10.append(
                    ' class="long-context"',
                )
            t_10.extend((
                '>\n<td>',
                escape(t_2(environment.getattr(l_2_point, 'at'))),
                '</td>\n<td>',
            ))
            if (environment.getattr(l_2_point, 'agent_id') == environment.getattr(l_1_session, 'session_id')):
                pass
                t_10.append(
                    'main',
                )
            elif ((environment.getattr(l_2_point, 'agent_id') in l_1_agents) and environment.getattr(environment.getitem(l_1_agents, environment.getattr(l_2_point, 'agent_id')), 'has_transcript')):
                pass
                t_10.extend((
                    '<a href="',
                    escape(l_1_agent_href),
                    escape(environment.getattr(l_2_point, 'agent_id')),
                    '.html">',
                    escape((environment.getattr(environment.getitem(l_1_agents, environment.getattr(l_2_point, 'agent_id')), 'description') or environment.getattr(l_2_point, 'agent_id'))),
                    '</a>',
                ))
            else:
                pass
                t_10.append(
                    escape(environment.getattr(l_2_point, 'agent_id')),
                )
            t_10.extend((
                '</td>\n<td>',
                escape(environment.getattr(l_2_point, 'model')),
                '</td>\n<td class="num">',
                escape(t_3(environment.getattr(l_2_point, 'context'))),
            ))
            if environment.getattr(l_2_point, 'long_context'):
                pass
                t_10.append(
                    ' <span class="flag" title="above 200,000 tokens: a long-context request">long</span>',
                )
            t_10.extend((
                '</td>\n<td class="num">',
                escape(t_4(environment.getattr(l_2_point, 'cost'))),
                '</td>\n</tr>\n',
            ))
        l_2_point = missing
        t_10.append(
            '</tbody>\n</table>',
        )
        return concat(t_10)
    context.exported_vars.add('largest_table')
    context.vars['largest_table'] = l_0_largest_table = Macro(environment, macro, 'largest_table', ('session', 'points', 'agents', 'agent_href'), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '3=42&5=62&6=67&10=93&13=100&14=102&15=104&16=106&17=108&18=110&19=114&25=122&27=133&29=144&30=150&31=168&38=191&42=205&43=211&44=218&45=221&46=243&47=245&48=254'