// expect: E_GUEST_ERROR
return await tools.rm_rf({})
