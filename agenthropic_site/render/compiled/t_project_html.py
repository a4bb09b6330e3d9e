from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'project.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_models_table = l_0_category_costs = l_0_status_badge = l_0_cache_table = l_0_tools_table = missing
    pass
    parent_template = environment.get_template('base.html', 'project.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_macros.html', 'project.html')._get_default_module(context)
    l_0_models_table = getattr(included_template, 'models_table', missing)
    if l_0_models_table is missing:
        l_0_models_table = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'project.html') does not export the requested name 'models_table'", name='models_table')
    l_0_category_costs = getattr(included_template, 'category_costs', missing)
    if l_0_category_costs is missing:
        l_0_category_costs = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'project.html') does not export the requested name 'category_costs'", name='category_costs')
    l_0_status_badge = getattr(included_template, 'status_badge', missing)
    if l_0_status_badge is missing:
        l_0_status_badge = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'project.html') does not export the requested name 'status_badge'", name='status_badge')
    context.vars.update({'models_table': l_0_models_table, 'category_costs': l_0_category_costs, 'status_badge': l_0_status_badge})
    context.exported_vars.difference_update(('models_table', 'category_costs', 'status_badge'))
    included_template = environment.get_template('_insights.html', 'project.html')._get_default_module(context)
    l_0_cache_table = getattr(included_template, 'cache_table', missing)
    if l_0_cache_table is missing:
        l_0_cache_table = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'project.html') does not export the requested name 'cache_table'", name='cache_table')
    l_0_tools_table = getattr(included_template, 'tools_table', missing)
    if l_0_tools_table is missing:
        l_0_tools_table = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'project.html') does not export the requested name 'tools_table'", name='tools_table')
    context.vars.update({'cache_table': l_0_cache_table, 'tools_table': l_0_tools_table})
    context.exported_vars.difference_update(('cache_table', 'tools_table'))
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_project = resolve('project')
    pass
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'display_name'))
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
    l_0_chart = resolve('chart')
    l_0_models_table = resolve('models_table')
    l_0_category_costs = resolve('category_costs')
    l_0_weekly = resolve('weekly')
    l_0_model = resolve('model')
    l_0_weeks_charts = resolve('weeks_charts')
    l_0_most_expensive = resolve('most_expensive')
    l_0_tool_totals = resolve('tool_totals')
    l_0_cache_table = resolve('cache_table')
    l_0_cache_efficiency = resolve('cache_efficiency')
    l_0_tools_table = resolve('tools_table')
    l_0_mcp_servers = resolve('mcp_servers')
    l_0_servers = resolve('servers')
    l_0_weeks = l_0_cost_chart = l_0_sessions_chart = l_0_top = l_0_tools = missing
    try:
        t_1 = environment.filters['epoch_ms']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'epoch_ms' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['short_time']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'short_time' found.")
    try:
        t_4 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_5 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    pass
    yield '<p class="crumbs"><a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">Projects</a> ›</p>\n<h1>'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'display_name'))
    yield '</h1>\n<p class="sub">Folder <code>'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'folder'))
    yield '</code></p>\n<section class="cards">\n  <div class="card"><span class="label">Sessions</span><span class="value">'
    yield escape(t_2(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'sessions')))
    yield '</span></div>\n  <div class="card"><span class="label">Tokens</span><span class="value">'
    yield escape(t_4(environment.getattr(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'tokens'), 'total')))
    yield '</span></div>\n  <div class="card"><span class="label">Cost'
    if environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'lower_bound'):
        pass
        yield ' (at least)'
    yield '</span><span class="value">'
    yield escape(t_5(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'cost')))
    yield '</span></div>\n</section>\n'
    if (undefined(name='chart') if l_0_chart is missing else l_0_chart):
        pass
        yield '<section><h2>Cost per day</h2>'
        yield escape((undefined(name='chart') if l_0_chart is missing else l_0_chart))
        yield '</section>'
    if environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'by_model'):
        pass
        yield '<section class="split"><div><h2>By model</h2>'
        yield escape(context.call((undefined(name='models_table') if l_0_models_table is missing else l_0_models_table), environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'by_model'), _block_vars=_block_vars))
        yield '</div><div><h2>By category</h2>'
        yield escape(context.call((undefined(name='category_costs') if l_0_category_costs is missing else l_0_category_costs), environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'cost_by_category'), _block_vars=_block_vars))
        yield '</div></section>'
    l_0_weeks = context.call((undefined(name='weekly') if l_0_weekly is missing else l_0_weekly), environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'sessions'), environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'usage'), 'tz'), _block_vars=_block_vars)
    _block_vars['weeks'] = l_0_weeks
    (l_0_cost_chart, l_0_sessions_chart) = context.call((undefined(name='weeks_charts') if l_0_weeks_charts is missing else l_0_weeks_charts), (undefined(name='weeks') if l_0_weeks is missing else l_0_weeks), _block_vars=_block_vars)
    _block_vars.update({'cost_chart': l_0_cost_chart, 'sessions_chart': l_0_sessions_chart})
    yield '<section class="weeks">\n<h2>Week by week</h2>\n<p class="sub">Weeks start on Monday ('
    yield escape(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'usage'), 'tz'))
    yield '); weeks without spend or sessions are left empty.</p>\n'
    if (undefined(name='cost_chart') if l_0_cost_chart is missing else l_0_cost_chart):
        pass
        yield '<h3>Cost per week</h3>'
        yield escape((undefined(name='cost_chart') if l_0_cost_chart is missing else l_0_cost_chart))
    if (undefined(name='sessions_chart') if l_0_sessions_chart is missing else l_0_sessions_chart):
        pass
        yield '<h3>Sessions per week</h3>'
        yield escape((undefined(name='sessions_chart') if l_0_sessions_chart is missing else l_0_sessions_chart))
    yield '</section>\n'
    l_0_top = context.call((undefined(name='most_expensive') if l_0_most_expensive is missing else l_0_most_expensive), environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'sessions'), _block_vars=_block_vars)
    _block_vars['top'] = l_0_top
    if (undefined(name='top') if l_0_top is missing else l_0_top):
        pass
        yield '<section>\n<h2>Most expensive sessions</h2>\n<table class="compact most-expensive">\n<thead><tr><th class="col-title">Session</th><th class="col-date">Start</th><th class="num">Cost</th></tr></thead>\n<tbody>\n'
        for l_1_session in (undefined(name='top') if l_0_top is missing else l_0_top):
            _loop_vars = {}
            pass
            yield '<tr><td class="col-title"><a href="'
            yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
            yield 'sessions/'
            yield escape(environment.getattr(l_1_session, 'session_id'))
            yield '/index.html">'
            yield escape((environment.getattr(l_1_session, 'title') or environment.getattr(l_1_session, 'session_id')))
            yield '</a></td><td class="col-date">'
            yield escape(t_3(environment.getattr(l_1_session, 'started_at')))
            yield '</td><td class="num">'
            yield escape(t_5(environment.getattr(l_1_session, 'cost')))
            yield '</td></tr>\n'
        l_1_session = missing
        yield '</tbody>\n</table>\n</section>\n'
    l_0_tools = context.call((undefined(name='tool_totals') if l_0_tool_totals is missing else l_0_tool_totals), environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'sessions'), _block_vars=_block_vars)
    _block_vars['tools'] = l_0_tools
    yield '<section class="split">\n<div><h2>Cache efficiency</h2>'
    yield escape(context.call((undefined(name='cache_table') if l_0_cache_table is missing else l_0_cache_table), context.call((undefined(name='cache_efficiency') if l_0_cache_efficiency is missing else l_0_cache_efficiency), environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'sessions'), _block_vars=_block_vars), _block_vars=_block_vars))
    if environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'lower_bound'):
        pass
        yield '<p class="sub">Costs leave out sessions whose cost is unknown.</p>'
    yield '</div>\n'
    if (undefined(name='tools') if l_0_tools is missing else l_0_tools):
        pass
        yield '<div><h2>Most used tools</h2>'
        yield escape(context.call((undefined(name='tools_table') if l_0_tools_table is missing else l_0_tools_table), (undefined(name='tools') if l_0_tools is missing else l_0_tools)[:20], timed=False, _block_vars=_block_vars))
        yield '</div>\n'
        l_0_servers = context.call((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers), (undefined(name='tools') if l_0_tools is missing else l_0_tools), _block_vars=_block_vars)
        _block_vars['servers'] = l_0_servers
        if (undefined(name='servers') if l_0_servers is missing else l_0_servers):
            pass
            yield '<div><h2>MCP servers</h2>'
            yield escape(context.call((undefined(name='tools_table') if l_0_tools_table is missing else l_0_tools_table), (undefined(name='servers') if l_0_servers is missing else l_0_servers), timed=False, label='Server', _block_vars=_block_vars))
            yield '</div>'
    yield '</section>\n<section>\n<table class="sortable">\n<thead><tr><th class="col-title">Title</th><th class="col-date">Start</th><th class="col-duration">Duration</th><th class="num col-agents">Agents</th><th class="num col-tokens">Tokens</th><th class="num col-cost">Cost</th><th class="col-status">Status</th><th class="num col-compactions">Compactions</th><th class="num col-failures">Failures</th></tr></thead>\n<tbody>\n'
    for l_1_session in environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'sessions'):
        l_1_duration_seconds = resolve('duration_seconds')
        l_1_duration = resolve('duration')
        l_1_status_badge = resolve('status_badge')
        _loop_vars = {}
        pass
        yield '<tr>\n  <td class="col-title"><a href="'
        yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
        yield 'sessions/'
        yield escape(environment.getattr(l_1_session, 'session_id'))
        yield '/index.html">'
        yield escape((environment.getattr(l_1_session, 'title') or environment.getattr(l_1_session, 'session_id')))
        yield '</a></td>\n  <td class="col-date" data-sort="'
        yield escape(t_1(environment.getattr(l_1_session, 'started_at')))
        yield '">'
        yield escape(t_3(environment.getattr(l_1_session, 'started_at')))
        yield '</td>\n  <td class="col-duration" data-sort="'
        yield escape(context.call((undefined(name='duration_seconds') if l_1_duration_seconds is missing else l_1_duration_seconds), environment.getattr(l_1_session, 'started_at'), environment.getattr(l_1_session, 'ended_at'), _loop_vars=_loop_vars))
        yield '">'
        yield escape(context.call((undefined(name='duration') if l_1_duration is missing else l_1_duration), environment.getattr(l_1_session, 'started_at'), environment.getattr(l_1_session, 'ended_at'), _loop_vars=_loop_vars))
        yield '</td>\n  <td class="num col-agents">'
        yield escape(t_2(environment.getattr(l_1_session, 'agent_ids')))
        yield '</td>\n  <td class="num col-tokens" data-sort="'
        yield escape(environment.getattr(environment.getattr(l_1_session, 'tokens'), 'total'))
        yield '">'
        if environment.getattr(l_1_session, 'excluded_reason'):
            pass
            yield '—'
        else:
            pass
            yield escape(t_4(environment.getattr(environment.getattr(l_1_session, 'tokens'), 'total')))
        yield '</td>\n  <td class="num col-cost" data-sort="'
        yield escape((environment.getattr(l_1_session, 'cost') or 0))
        yield '">'
        if environment.getattr(l_1_session, 'excluded_reason'):
            pass
            yield '<span class="excluded">excluded</span>'
        else:
            pass
            yield escape(t_5(environment.getattr(l_1_session, 'cost')))
        yield '</td>\n  <td class="col-status">'
        yield escape(context.call((undefined(name='status_badge') if l_1_status_badge is missing else l_1_status_badge), environment.getattr(l_1_session, 'status'), environment.getattr(l_1_session, 'ended_at'), _loop_vars=_loop_vars))
        yield '</td>\n  <td class="num col-compactions">'
        yield escape(environment.getattr(l_1_session, 'compactions'))
        yield '</td>\n  <td class="num col-failures">'
        yield escape(environment.getattr(l_1_session, 'failed_agents'))
        yield '</td>\n</tr>\n'
    l_1_session = l_1_duration_seconds = l_1_duration = l_1_status_badge = missing
    yield '</tbody>\n</table>\n</section>\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=13&2=16&3=28&4=39&5=51&6=106&7=108&8=110&10=112&11=114&12=116&14=122&15=127&16=134&17=136&20=139&21=141&22=145&24=150&25=152&31=155&37=171&39=174&40=179&41=184&47=192&49=199&50=205&51=209&52=213&53=215&54=224&55=233&56=235&57=237'