from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'index.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_models_table = l_0_category_costs = l_0_share = missing
    pass
    parent_template = environment.get_template('base.html', 'index.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_macros.html', 'index.html')._get_default_module(context)
    l_0_models_table = getattr(included_template, 'models_table', missing)
    if l_0_models_table is missing:
        l_0_models_table = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'index.html') does not export the requested name 'models_table'", name='models_table')
    l_0_category_costs = getattr(included_template, 'category_costs', missing)
    if l_0_category_costs is missing:
        l_0_category_costs = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'index.html') does not export the requested name 'category_costs'", name='category_costs')
    context.vars.update({'models_table': l_0_models_table, 'category_costs': l_0_category_costs})
    context.exported_vars.difference_update(('models_table', 'category_costs'))
    included_template = environment.get_template('_insights.html', 'index.html')._get_default_module(context)
    l_0_share = getattr(included_template, 'share', missing)
    if l_0_share is missing:
        l_0_share = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'index.html') does not export the requested name 'share'", name='share')
    context.vars['share'] = l_0_share
    context.exported_vars.discard('share')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Claude Code sessions · agenthropic'

def block_content(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_model = resolve('model')
    l_0_cache_efficiency = resolve('cache_efficiency')
    l_0_share = resolve('share')
    l_0_chart = resolve('chart')
    l_0_usage = resolve('usage')
    l_0_root = resolve('root')
    l_0_models_table = resolve('models_table')
    l_0_category_costs = resolve('category_costs')
    l_0_search_index = resolve('search_index')
    l_0_session_rows = resolve('session_rows')
    l_0_cache = missing
    try:
        t_1 = environment.filters['epoch_ms']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'epoch_ms' found.")
    try:
        t_2 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_4 = environment.filters['short_time']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'short_time' found.")
    try:
        t_5 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_6 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    try:
        t_7 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    pass
    yield '<h1>Claude Code sessions</h1>\n<section class="cards">\n  <div class="card"><span class="label">Projects</span><span class="value">'
    yield escape(t_3(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'projects')))
    yield '</span></div>\n  <div class="card"><span class="label">Sessions</span><span class="value">'
    yield escape(t_3(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'sessions')))
    yield '</span></div>\n  <div class="card"><span class="label">Tokens</span><span class="value">'
    yield escape(t_5(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'tokens'), 'total')))
    yield '</span></div>\n'
    l_0_cache = context.call((undefined(name='cache_efficiency') if l_0_cache_efficiency is missing else l_0_cache_efficiency), context.call(environment.getattr(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'sessions'), 'values'), _block_vars=_block_vars), _block_vars=_block_vars)
    _block_vars['cache'] = l_0_cache
    yield '<div class="card"><span class="label">Cache reads</span><span class="value">'
    yield escape(context.call((undefined(name='share') if l_0_share is missing else l_0_share), environment.getattr((undefined(name='cache') if l_0_cache is missing else l_0_cache), 'read_share'), _block_vars=_block_vars))
    yield '</span><span class="sub">of all input; caching saved '
    yield escape(t_7(environment.getattr((undefined(name='cache') if l_0_cache is missing else l_0_cache), 'saved')))
    yield ' ('
    yield escape(t_7(environment.getattr((undefined(name='cache') if l_0_cache is missing else l_0_cache), 'uncached_cost')))
    yield ' without it)</span></div>\n  <div class="card"><span class="label">Cost'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'lower_bound'):
        pass
        yield ' (at least)'
    yield '</span><span class="value">'
    yield escape(t_7(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'cost')))
    yield '</span></div>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'reported_agents'):
        pass
        yield '<div class="card"><span class="label">Reported, not counted</span><span class="value">'
        yield escape(t_5(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'reported_tokens')))
        yield '</span><span class="sub">tokens in the last requests of '
        yield escape(t_5(environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'reported_agents')))
        yield ' agent(s) without a transcript, as their spawners report them</span></div>'
    yield '</section>\n'
    if (undefined(name='chart') if l_0_chart is missing else l_0_chart):
        pass
        yield '<section><h2>Cost per day</h2>'
        yield escape((undefined(name='chart') if l_0_chart is missing else l_0_chart))
        yield '</section>'
    if environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'blocks'):
        pass
        yield '<section class="usage" id="usage">\n<h2>Usage windows</h2>\n<p class="sub">In '
        yield escape(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'tz'))
        yield '. Every request is counted once, in the session that owns it; a session with a request that has no price adds its tokens but no cost, and its windows\' costs read "at least". Every window is in <a href="'
        yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
        yield 'data/usage.json">data/usage.json</a>.</p>\n<h3>5-hour blocks</h3>\n'
        yield escape(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'chart'))
        yield '\n<p class="busiest">'
        yield escape(t_5(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'blocks')))
        yield ' block(s) with usage. Busiest (marked ▼): '
        yield escape(environment.getattr(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'busiest'), 'label'))
        yield ', '
        yield escape(t_5(environment.getattr(environment.getattr(environment.getattr(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'busiest'), 'window'), 'tokens'), 'total')))
        yield ' tokens, '
        if environment.getattr(environment.getattr(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'busiest'), 'window'), 'priced'):
            pass
            yield escape(t_7(environment.getattr(environment.getattr(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'busiest'), 'window'), 'cost')))
            if (not environment.getattr(environment.getattr(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'busiest'), 'window'), 'cost_complete')):
                pass
                yield ' at least'
        else:
            pass
            yield 'cost unknown'
        yield ', '
        yield escape(environment.getattr(environment.getattr(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'busiest'), 'window'), 'sessions'))
        yield ' session(s).</p>\n'
        for l_1_table in environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'tables'):
            _loop_vars = {}
            pass
            yield '<h3>'
            yield escape(environment.getattr(l_1_table, 'title'))
            yield '</h3>\n<table class="usage-table usage-'
            yield escape(environment.getattr(l_1_table, 'kind'))
            yield '">\n<thead><tr><th class="col-date">Period</th><th class="num col-tokens">Tokens</th><th class="num col-cost">Cost</th><th class="num col-sessions">Sessions</th><th class="col-models">Top models</th></tr></thead>\n<tbody>\n'
            for l_2_row in environment.getattr(l_1_table, 'rows'):
                _loop_vars = {}
                pass
                yield '<tr>\n  <td class="col-date">'
                yield escape(environment.getattr(l_2_row, 'label'))
                yield '</td>\n  <td class="num col-tokens">'
                yield escape(t_5(environment.getattr(environment.getattr(environment.getattr(l_2_row, 'window'), 'tokens'), 'total')))
                yield '</td>\n  <td class="num col-cost">'
                if environment.getattr(environment.getattr(l_2_row, 'window'), 'priced'):
                    pass
                    yield escape(t_7(environment.getattr(environment.getattr(l_2_row, 'window'), 'cost')))
                    if (not environment.getattr(environment.getattr(l_2_row, 'window'), 'cost_complete')):
                        pass
                        yield '<span class="flag" title="at least: a session with an unpriced request is in this window">+</span>'
                else:
                    pass
                    yield '<span class="excluded" title="no request of this window has a price">unknown</span>'
                yield '</td>\n  <td class="num col-sessions">'
                yield escape(environment.getattr(environment.getattr(l_2_row, 'window'), 'sessions'))
                yield '</td>\n  <td class="col-models">'
                yield escape(t_2(context.eval_ctx, environment.getattr(l_2_row, 'top_models'), ', '))
                yield '</td>\n</tr>\n'
            l_2_row = missing
            yield '</tbody>\n</table>\n'
            if environment.getattr(l_1_table, 'earlier'):
                pass
                yield '<p class="sub">'
                yield escape(t_5(environment.getattr(l_1_table, 'earlier')))
                yield ' earlier '
                yield escape(environment.getattr(l_1_table, 'kind'))
                yield ' in <a href="'
                yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
                yield 'data/usage.json">data/usage.json</a>.</p>'
        l_1_table = missing
        yield '</section>\n'
    if environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'by_model'):
        pass
        yield '<section class="split"><div><h2>By model</h2>'
        yield escape(context.call((undefined(name='models_table') if l_0_models_table is missing else l_0_models_table), environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'by_model'), _block_vars=_block_vars))
        yield '</div><div><h2>By category</h2>'
        yield escape(context.call((undefined(name='category_costs') if l_0_category_costs is missing else l_0_category_costs), environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'cost_by_category'), _block_vars=_block_vars))
        yield '</div></section>'
    yield '<section>\n<h2>Projects</h2>\n<table class="sortable">\n<thead><tr><th class="col-title">Project</th><th class="num col-sessions">Sessions</th><th class="num col-tokens">Tokens</th><th class="num col-cost">Cost</th><th class="col-date">Last activity</th></tr></thead>\n<tbody>\n'
    for l_1_project in environment.getattr((undefined(name='model') if l_0_model is missing else l_0_model), 'projects'):
        _loop_vars = {}
        pass
        yield '<tr>\n  <td class="col-title"><a href="'
        yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
        yield 'projects/'
        yield escape(environment.getattr(l_1_project, 'key'))
        yield '/index.html">'
        yield escape(environment.getattr(l_1_project, 'display_name'))
        yield '</a><div class="sub">'
        yield escape(environment.getattr(l_1_project, 'folder'))
        yield '</div></td>\n  <td class="num col-sessions">'
        yield escape(t_3(environment.getattr(l_1_project, 'sessions')))
        yield '</td>\n  <td class="num col-tokens" data-sort="'
        yield escape(environment.getattr(environment.getattr(l_1_project, 'tokens'), 'total'))
        yield '">'
        yield escape(t_5(environment.getattr(environment.getattr(l_1_project, 'tokens'), 'total')))
        yield '</td>\n  <td class="num col-cost" data-sort="'
        yield escape(environment.getattr(l_1_project, 'cost'))
        yield '">'
        yield escape(t_7(environment.getattr(l_1_project, 'cost')))
        if environment.getattr(l_1_project, 'lower_bound'):
            pass
            yield '<span class="flag" title="lower bound">+</span>'
        yield '</td>\n  <td class="col-date" data-sort="'
        yield escape(t_1(environment.getattr(l_1_project, 'last_activity')))
        yield '">'
        yield escape(t_4(environment.getattr(l_1_project, 'last_activity')))
        yield '</td>\n</tr>\n'
    l_1_project = missing
    yield '</tbody>\n</table>\n</section>\n<section>\n<h2>Sessions</h2>\n<p><span class="js-only"><label for="search">Search titles and prompts</label> <input id="search" type="search" placeholder="Filter sessions…"></span>\n<a class="search-all" href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'search.html">Search every transcript</a></p>\n<script type="application/json" id="search-index">'
    yield escape(t_6(context.eval_ctx, (undefined(name='search_index') if l_0_search_index is missing else l_0_search_index)))
    yield '</script>\n<table class="sortable" id="sessions">\n<thead><tr><th class="col-title">Session</th><th class="col-project">Project</th><th class="col-date">Started</th><th class="col-status">Status</th><th class="num col-tokens">Tokens</th><th class="num col-cost">Cost</th></tr></thead>\n<tbody>\n'
    yield escape((undefined(name='session_rows') if l_0_session_rows is missing else l_0_session_rows))
    yield '</tbody>\n</table>\n</section>\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=13&2=16&3=25&4=33&5=43&8=105&9=107&10=109&11=111&12=120&13=126&15=134&16=139&19=142&21=146&22=148&23=166&24=170&25=172&28=174&30=178&31=180&32=182&33=192&34=194&39=198&43=209&49=217&51=221&52=229&53=231&54=235&55=242&64=248&66=250&70=252'