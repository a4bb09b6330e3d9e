from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'session.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_agent_tree = l_0_tokens_table = l_0_models_table = l_0_status_badge = l_0_outline_list = l_0_where_the_transcript_is = l_0_cache_table = l_0_tools_table = l_0_largest_table = missing
    pass
    parent_template = environment.get_template('base.html', 'session.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_macros.html', 'session.html')._get_default_module(context)
    l_0_agent_tree = getattr(included_template, 'agent_tree', missing)
    if l_0_agent_tree is missing:
        l_0_agent_tree = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'session.html') does not export the requested name 'agent_tree'", name='agent_tree')
    l_0_tokens_table = getattr(included_template, 'tokens_table', missing)
    if l_0_tokens_table is missing:
        l_0_tokens_table = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'session.html') does not export the requested name 'tokens_table'", name='tokens_table')
    l_0_models_table = getattr(included_template, 'models_table', missing)
    if l_0_models_table is missing:
        l_0_models_table = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'session.html') does not export the requested name 'models_table'", name='models_table')
    l_0_status_badge = getattr(included_template, 'status_badge', missing)
    if l_0_status_badge is missing:
        l_0_status_badge = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'session.html') does not export the requested name 'status_badge'", name='status_badge')
    context.vars.update({'agent_tree': l_0_agent_tree, 'tokens_table': l_0_tokens_table, 'models_table': l_0_models_table, 'status_badge': l_0_status_badge})
    context.exported_vars.difference_update(('agent_tree', 'tokens_table', 'models_table', 'status_badge'))
    included_template = environment.get_template('_reader.html', 'session.html')._get_default_module(context)
    l_0_outline_list = getattr(included_template, 'outline_list', missing)
    if l_0_outline_list is missing:
        l_0_outline_list = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'session.html') does not export the requested name 'outline_list'", name='outline_list')
    l_0_where_the_transcript_is = getattr(included_template, 'where_the_transcript_is', missing)
    if l_0_where_the_transcript_is is missing:
        l_0_where_the_transcript_is = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'session.html') does not export the requested name 'where_the_transcript_is'", name='where_the_transcript_is')
    context.vars.update({'outline_list': l_0_outline_list, 'where_the_transcript_is': l_0_where_the_transcript_is})
    context.exported_vars.difference_update(('outline_list', 'where_the_transcript_is'))
    included_template = environment.get_template('_insights.html', 'session.html')._get_default_module(context)
    l_0_cache_table = getattr(included_template, 'cache_table', missing)
    if l_0_cache_table is missing:
        l_0_cache_table = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'session.html') does not export the requested name 'cache_table'", name='cache_table')
    l_0_tools_table = getattr(included_template, 'tools_table', missing)
    if l_0_tools_table is missing:
        l_0_tools_table = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'session.html') does not export the requested name 'tools_table'", name='tools_table')
    l_0_largest_table = getattr(included_template, 'largest_table', missing)
    if l_0_largest_table is missing:
        l_0_largest_table = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'session.html') does not export the requested name 'largest_table'", name='largest_table')
    context.vars.update({'cache_table': l_0_cache_table, 'tools_table': l_0_tools_table, 'largest_table': l_0_largest_table})
    context.exported_vars.difference_update(('cache_table', 'tools_table', 'largest_table'))
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_session = resolve('session')
    pass
    yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'title') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')))
    yield ' · agenthropic'

def block_content(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_root = resolve('root')
    l_0_project = resolve('project')
    l_0_session = resolve('session')
    l_0_duration = resolve('duration')
    l_0_status_badge = resolve('status_badge')
    l_0_tokens_table = resolve('tokens_table')
    l_0_models_table = resolve('models_table')
    l_0_cumulative = resolve('cumulative')
    l_0_session_context_chart = resolve('session_context_chart')
    l_0_largest_table = resolve('largest_table')
    l_0_agents = resolve('agents')
    l_0_cache_table = resolve('cache_table')
    l_0_tools_table = resolve('tools_table')
    l_0_graph = resolve('graph')
    l_0_agent_tree = resolve('agent_tree')
    l_0_agent_rows = resolve('agent_rows')
    l_0_absent = resolve('absent')
    l_0_pages = resolve('pages')
    l_0_outline_list = resolve('outline_list')
    l_0_outline = resolve('outline')
    l_0_where_the_transcript_is = resolve('where_the_transcript_is')
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_4 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_5 = environment.filters['rejectattr']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'rejectattr' found.")
    try:
        t_6 = environment.filters['select']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'select' found.")
    try:
        t_7 = environment.filters['short_time']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'short_time' found.")
    try:
        t_8 = environment.filters['signed_usd']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'signed_usd' found.")
    try:
        t_9 = environment.filters['sum']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'sum' found.")
    try:
        t_10 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_11 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_11(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    pass
    yield '<p class="crumbs"><a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">Projects</a> › <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'projects/'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'key'))
    yield '/index.html">'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'display_name'))
    yield '</a> ›</p>\n<h1>'
    yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'title') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')))
    yield '</h1>\n'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'excluded_reason'):
        pass
        yield '<p class="banner warn" role="alert">This session\'s cost is unknown and left out of the cost totals: '
        yield escape(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'excluded_reason'))
        yield '. Its token counts are exact and counted. Add a price with <code>--pricing FILE</code> to include its cost.</p>'
    if (environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'main_state') == 'empty'):
        pass
        yield '<p class="banner">The main transcript of this session is empty (0 bytes): what is shown comes from its agent files.</p>\n'
    elif (environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'main_state') == 'absent'):
        pass
        yield '<p class="banner">This session has no main transcript in the corpus: what is shown comes from its agent files alone, and agents no evidence links are listed as unlinked.</p>'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'copies_counted_in'):
        pass
        yield '<p class="banner">'
        l_1_loop = missing
        for (l_1_owner, l_1_count), l_1_loop in LoopContext(context.call(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'copies_counted_in'), 'items'), _block_vars=_block_vars), undefined):
            _loop_vars = {}
            pass
            yield escape(t_10(l_1_count))
            yield ' request(s) here are copies of requests counted in session <a href="'
            yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
            yield 'sessions/'
            yield escape(l_1_owner)
            yield '/index.html"><code>'
            yield escape(l_1_owner)
            yield '</code></a>'
            if (not environment.getattr(l_1_loop, 'last')):
                pass
                yield '; '
        l_1_loop = l_1_owner = l_1_count = missing
        yield ': they are counted there, once.</p>'
    yield '<dl class="facts">\n  <dt>Session</dt><dd><code>'
    yield escape(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id'))
    yield '</code></dd>\n  <dt>Directory</dt><dd><code>'
    yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'cwd') or '—'))
    yield '</code></dd>\n  <dt>Branch</dt><dd>'
    yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'git_branch') or '—'))
    yield '</dd>\n  <dt>Claude Code</dt><dd>'
    yield escape((t_1(context.eval_ctx, environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'versions'), ', ') or '—'))
    yield '</dd>\n  <dt>Models</dt><dd>'
    yield escape((t_1(context.eval_ctx, context.call(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'by_model'), 'keys'), _block_vars=_block_vars), ', ') or '—'))
    yield '</dd>\n  <dt>Started</dt><dd>'
    yield escape(t_7(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'started_at')))
    yield '</dd>\n  <dt>Duration</dt><dd>'
    yield escape(context.call((undefined(name='duration') if l_0_duration is missing else l_0_duration), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'started_at'), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'ended_at'), _block_vars=_block_vars))
    yield '</dd>\n  <dt>Status</dt><dd>'
    yield escape(context.call((undefined(name='status_badge') if l_0_status_badge is missing else l_0_status_badge), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'status'), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'ended_at'), _block_vars=_block_vars))
    yield '</dd>\n  <dt>Cost</dt><dd>'
    yield escape(t_11(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'cost')))
    yield '</dd>\n</dl>\n'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'excluded_reason'):
        pass
        yield '<section class="split">\n<div><h2>By category</h2>'
        yield escape(context.call((undefined(name='tokens_table') if l_0_tokens_table is missing else l_0_tokens_table), context.call(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'tokens'), 'as_dict'), _block_vars=_block_vars), _block_vars=_block_vars))
        yield '</div>\n<div><h2>By model</h2>'
        yield escape(context.call((undefined(name='models_table') if l_0_models_table is missing else l_0_models_table), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'by_model'), costs_known=False, _block_vars=_block_vars))
        yield '</div>\n</section>\n'
    else:
        pass
        yield '<section class="split">\n<div><h2>By category</h2>'
        yield escape(context.call((undefined(name='tokens_table') if l_0_tokens_table is missing else l_0_tokens_table), context.call(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'tokens'), 'as_dict'), _block_vars=_block_vars), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'cost_by_category'), _block_vars=_block_vars))
        yield '</div>\n<div><h2>By model</h2>'
        yield escape(context.call((undefined(name='models_table') if l_0_models_table is missing else l_0_models_table), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'by_model'), _block_vars=_block_vars))
        yield '</div>\n'
        if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'what_if'):
            pass
            yield '<div><h2>What if</h2>\n<table class="compact"><thead><tr><th>Requests of</th><th>priced as</th><th class="num">Cost</th><th class="num">Change</th></tr></thead><tbody>\n'
            for l_1_w in environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'what_if'):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.getattr(l_1_w, 'source'))
                yield '</td><td>'
                yield escape(environment.getattr(l_1_w, 'target'))
                yield '</td><td class="num">'
                yield escape(t_11(environment.getattr(l_1_w, 'cost')))
                yield '</td><td class="num">'
                yield escape(t_8(environment.getattr(l_1_w, 'delta')))
                yield '</td></tr>'
            l_1_w = missing
            yield '</tbody></table></div>\n'
        yield '</section>\n'
        if (undefined(name='cumulative') if l_0_cumulative is missing else l_0_cumulative):
            pass
            yield '<section><h2>Cumulative cost</h2>'
            yield escape((undefined(name='cumulative') if l_0_cumulative is missing else l_0_cumulative))
            yield '</section>'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'context'):
        pass
        yield '<section class="context-growth">\n<h2>Context growth</h2>\n<p class="sub">The context of each request (input + cache read + cache write), one line an agent'
        if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'compactions'):
            pass
            yield '; dashed lines are compactions'
        yield '. Requests above 200,000 tokens are long-context: circled here, flagged below, and billed at long-context rates where the model has them.</p>\n'
        yield escape(context.call((undefined(name='session_context_chart') if l_0_session_context_chart is missing else l_0_session_context_chart), (undefined(name='session') if l_0_session is missing else l_0_session), _block_vars=_block_vars))
        yield '\n<h3>Largest requests</h3>\n'
        yield escape(context.call((undefined(name='largest_table') if l_0_largest_table is missing else l_0_largest_table), (undefined(name='session') if l_0_session is missing else l_0_session), context.call(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'largest'), _block_vars=_block_vars), (undefined(name='agents') if l_0_agents is missing else l_0_agents), 'agents/', _block_vars=_block_vars))
        yield '\n</section>\n'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'context'):
        pass
        yield '<section class="split">\n<div><h2>Cache efficiency</h2>'
        yield escape(context.call((undefined(name='cache_table') if l_0_cache_table is missing else l_0_cache_table), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'cache'), _block_vars=_block_vars))
        yield '</div>\n'
        if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'tools'):
            pass
            yield '<div><h2>Tool activity</h2>'
            yield escape(context.call((undefined(name='tools_table') if l_0_tools_table is missing else l_0_tools_table), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'tools'), _block_vars=_block_vars))
            yield '<p class="sub">Every agent\'s calls; the time runs from the reply that made a call to its result.</p></div>'
        yield '</section>\n'
    elif environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'tools'):
        pass
        yield '<section><h2>Tool activity</h2>'
        yield escape(context.call((undefined(name='tools_table') if l_0_tools_table is missing else l_0_tools_table), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'tools'), _block_vars=_block_vars))
        yield '</section>\n'
    if (t_2(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'agents')) > 1):
        pass
        yield '<section>\n<h2>Agents</h2>\n'
        if (t_2(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'critical_path')) > 1):
            pass
            yield '<p class="sub">Heavier outlines and orange links mark the critical path: the chain of agents whose active times add up most.</p>'
        if (undefined(name='graph') if l_0_graph is missing else l_0_graph):
            pass
            yield '<figure class="dag">'
            yield escape((undefined(name='graph') if l_0_graph is missing else l_0_graph))
            yield '</figure>'
        else:
            pass
            yield '<ul class="tree">'
            yield escape(context.call((undefined(name='agent_tree') if l_0_agent_tree is missing else l_0_agent_tree), (undefined(name='session') if l_0_session is missing else l_0_session), (undefined(name='agents') if l_0_agents is missing else l_0_agents), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id'), (undefined(name='root') if l_0_root is missing else l_0_root), _block_vars=_block_vars))
            for l_1_agent_id in environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'unlinked_agents'):
                _loop_vars = {}
                pass
                yield escape(context.call((undefined(name='agent_tree') if l_0_agent_tree is missing else l_0_agent_tree), (undefined(name='session') if l_0_session is missing else l_0_session), (undefined(name='agents') if l_0_agents is missing else l_0_agents), l_1_agent_id, (undefined(name='root') if l_0_root is missing else l_0_root), _loop_vars=_loop_vars))
            l_1_agent_id = missing
            yield '</ul>'
        yield '<table class="sortable agents">\n<thead><tr><th>Agent</th><th>Kind</th><th>Type</th><th>Status</th><th>Outcome</th><th>Linked by</th><th class="num">Tokens</th><th class="num">Cost</th><th class="num">Subtree tokens</th><th class="num">Subtree cost</th></tr></thead>\n<tbody>\n'
        yield escape((undefined(name='agent_rows') if l_0_agent_rows is missing else l_0_agent_rows))
        yield '</tbody>\n</table>\n'
        l_0_absent = t_3(context.eval_ctx, t_5(context, environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'agents'), 'has_transcript'))
        _block_vars['absent'] = l_0_absent
        if (undefined(name='absent') if l_0_absent is missing else l_0_absent):
            pass
            yield '<p class="sub">'
            yield escape(t_2((undefined(name='absent') if l_0_absent is missing else l_0_absent)))
            yield " agent(s) ran without a transcript in the corpus. What their spawners' results report ("
            yield escape(t_10(t_9(environment, t_6(context, t_4(context, t_6(context, t_4(context, (undefined(name='absent') if l_0_absent is missing else l_0_absent), attribute='reported')), attribute='total_tokens')))))
            yield " tokens, the last request of each) is shown as reported by the parent and is not in any total: those agents' spend is unknown here.</p>"
        yield '</section>\n'
    if environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'under_reported'), 'requests'):
        pass
        yield '<p class="sub">'
        yield escape(t_10(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'under_reported'), 'requests')))
        yield ' request(s) end on a streaming placeholder output count ('
        yield escape(t_10(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'under_reported'), 'recorded_output')))
        yield ' output tokens recorded). Estimate, from the length of what they wrote, not in any total: roughly '
        yield escape(t_10(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'under_reported'), 'estimate_low')))
        yield '–'
        yield escape(t_10(environment.getattr(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'under_reported'), 'estimate_high')))
        yield ' output tokens went unrecorded.</p>\n'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'compactions'):
        pass
        yield '<section>\n<h2>Compactions</h2>\n<p class="sub">Each boundary closes a segment of the conversation; its spend includes the summariser\'s call.'
        if (t_2(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'segments')) > 1):
            pass
            yield ' Spend after the last main-agent boundary: '
            yield escape(t_11(environment.getitem(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'segments'), -1)))
            yield '.'
        yield '</p>\n<table><thead><tr><th>When</th><th>Agent</th><th>Trigger</th><th class="num">Spend before</th><th class="num">Context before</th><th class="num">after</th><th>Summariser</th></tr></thead><tbody>\n'
        for l_1_c in environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'compactions'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(t_7(environment.getattr(l_1_c, 'at')))
            yield '</td><td>'
            if (environment.getattr(l_1_c, 'agent_id') == environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')):
                pass
                yield 'main'
            else:
                pass
                yield '<a href="agents/'
                yield escape(environment.getattr(l_1_c, 'agent_id'))
                yield '.html">'
                yield escape(environment.getattr(l_1_c, 'agent_id'))
                yield '</a>'
            yield '</td><td>'
            yield escape((environment.getattr(l_1_c, 'trigger') or '—'))
            yield '</td><td class="num">'
            yield escape(t_11(environment.getattr(l_1_c, 'cost_before')))
            yield '</td><td class="num">'
            yield escape(t_10(environment.getattr(l_1_c, 'pre_tokens')))
            yield '</td><td class="num">'
            yield escape(t_10(environment.getattr(l_1_c, 'post_tokens')))
            yield '</td>\n<td>'
            if environment.getattr(l_1_c, 'compaction_agent_id'):
                pass
                yield '<a href="agents/'
                yield escape(environment.getattr(l_1_c, 'compaction_agent_id'))
                yield '.html">'
                yield escape(environment.getattr(l_1_c, 'compaction_agent_id'))
                yield '</a>'
            else:
                pass
                yield '—'
            yield '</td></tr>\n'
        l_1_c = missing
        yield '</tbody></table>\n</section>\n'
    if ((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'warnings') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'line_errors')) or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'graph_problems')):
        pass
        yield '<section>\n<h2>Warnings</h2>\n<ul class="warnings">\n'
        for l_1_w in environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'warnings'):
            _loop_vars = {}
            pass
            yield '<li><code>'
            yield escape(environment.getattr(l_1_w, 'code'))
            yield '</code> '
            yield escape(environment.getattr(l_1_w, 'message'))
            yield '</li>'
        l_1_w = missing
        for l_1_problem in environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'graph_problems'):
            _loop_vars = {}
            pass
            yield '<li><code>graph_check</code> '
            yield escape(l_1_problem)
            yield '</li>'
        l_1_problem = missing
        for l_1_e in environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'line_errors'):
            _loop_vars = {}
            pass
            yield '<li><code>'
            yield escape(environment.getattr(l_1_e, 'code'))
            yield '</code> '
            yield escape(environment.getattr(l_1_e, 'file'))
            yield ':'
            yield escape(environment.getattr(l_1_e, 'line'))
            yield ' '
            yield escape(environment.getattr(l_1_e, 'message'))
            yield '</li>'
        l_1_e = missing
        yield '</ul>\n</section>\n'
    yield '<section>\n<h2>Transcript</h2>\n'
    if (environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'main_state') == 'present'):
        pass
        yield '<p class="sub">'
        yield escape(t_10((undefined(name='pages') if l_0_pages is missing else l_0_pages)))
        yield ' page'
        if ((undefined(name='pages') if l_0_pages is missing else l_0_pages) != 1):
            pass
            yield 's'
        yield ': <a href="transcript/1.html">read from the start</a>'
        if ((undefined(name='pages') if l_0_pages is missing else l_0_pages) > 1):
            pass
            yield ' · <a href="transcript/'
            yield escape((undefined(name='pages') if l_0_pages is missing else l_0_pages))
            yield '.html">the latest page</a>'
        yield '</p>\n'
        yield escape(context.call((undefined(name='outline_list') if l_0_outline_list is missing else l_0_outline_list), (undefined(name='outline') if l_0_outline is missing else l_0_outline), 'transcript/', (undefined(name='pages') if l_0_pages is missing else l_0_pages), _block_vars=_block_vars))
        yield '\n'
    else:
        pass
        yield '<p class="sub">'
        yield escape(context.call((undefined(name='where_the_transcript_is') if l_0_where_the_transcript_is is missing else l_0_where_the_transcript_is), (undefined(name='session') if l_0_session is missing else l_0_session), _block_vars=_block_vars))
        yield ' (Agents, above).</p>\n'
    yield '</section>\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=13&2=16&3=31&4=40&5=54&6=66&7=162&8=170&9=172&10=177&11=180&12=183&14=204&15=206&16=208&17=210&18=212&19=214&20=216&21=218&22=220&24=222&26=225&27=227&31=232&32=234&33=236&36=239&40=254&42=259&45=262&46=266&48=268&51=270&53=273&54=275&56=281&57=284&59=286&62=289&63=292&67=308&69=310&70=312&73=320&74=323&76=331&79=334&81=340&82=344&83=365&88=378&92=381&93=390&94=397&100=412&101=415&102=427&105=432'